// Waits in every way the OS runtime hooks record, each in a function of its
// own, each about WAIT_MS long (a helper thread releases it, or a timeout
// ends it). Prints what each waited on ("<what> <object>"), so the test can
// compare the trace's objects with the program's own. `short` instead makes
// calls that do not wait: none of them should be recorded as blocking.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 20
#define NOINLINE __attribute__((noinline))

typedef void (*Action)(void);
static Action helper_action;

static void* helper(void* unused) {
  (void)unused;
  usleep(WAIT_MS * 1000);
  helper_action();
  return NULL;
}

static pthread_t start_helper(Action action) {
  pthread_t thread;
  helper_action = action;
  pthread_create(&thread, NULL, helper, NULL);
  return thread;
}

// ---- a contended mutex
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int mutex_held;
static void* hold_mutex(void* unused) {
  (void)unused;
  pthread_mutex_lock(&mutex);
  atomic_store(&mutex_held, 1);
  usleep(WAIT_MS * 1000);
  pthread_mutex_unlock(&mutex);
  return NULL;
}
NOINLINE void wait_on_mutex(void) {
  pthread_t holder;
  pthread_create(&holder, NULL, hold_mutex, NULL);
  while (!atomic_load(&mutex_held)) sched_yield();
  pthread_mutex_lock(&mutex);
  pthread_mutex_unlock(&mutex);
  pthread_join(holder, NULL);
  printf("mutex %p\n", (void*)&mutex);
}

// ---- a condition variable
static pthread_mutex_t condition_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t condition = PTHREAD_COND_INITIALIZER;
static int ready;
static void signal_condition(void) {
  pthread_mutex_lock(&condition_mutex);
  ready = 1;
  pthread_cond_signal(&condition);
  pthread_mutex_unlock(&condition_mutex);
}
NOINLINE void wait_on_condition(void) {
  pthread_mutex_lock(&condition_mutex);
  pthread_t t = start_helper(signal_condition);
  while (!ready) pthread_cond_wait(&condition, &condition_mutex);
  pthread_mutex_unlock(&condition_mutex);
  pthread_join(t, NULL);
  printf("condition %p\n", (void*)&condition);
}

// ---- a pipe and a socket
static int pipe_fds[2];
static void write_pipe(void) { (void)!write(pipe_fds[1], "x", 1); }
NOINLINE void wait_on_pipe(void) {
  char byte;
  (void)!pipe(pipe_fds);
  pthread_t t = start_helper(write_pipe);
  (void)!read(pipe_fds[0], &byte, 1);
  pthread_join(t, NULL);
  printf("pipe %d\n", pipe_fds[0]);
}

// Built with _FORTIFY_SOURCE=2: a length the compiler cannot see makes this
// read glibc's __read_chk.
static int fortified_fds[2];
static volatile size_t one_byte = 1;
static void write_fortified(void) { (void)!write(fortified_fds[1], "x", 1); }
NOINLINE void wait_on_pipe_fortified(void) {
  char bytes[4];
  (void)!pipe(fortified_fds);
  pthread_t t = start_helper(write_fortified);
  (void)!read(fortified_fds[0], bytes, one_byte);
  pthread_join(t, NULL);
  printf("fortified %d\n", fortified_fds[0]);
}

static int socket_fds[2];
static void write_socket(void) { (void)!send(socket_fds[1], "x", 1, 0); }
NOINLINE void wait_on_socket(void) {
  char byte;
  socketpair(AF_UNIX, SOCK_STREAM, 0, socket_fds);
  pthread_t t = start_helper(write_socket);
  (void)!recv(socket_fds[0], &byte, 1, 0);
  pthread_join(t, NULL);
  printf("socket %d\n", socket_fds[0]);
}

// ---- sleeps
NOINLINE void sleep_with_nanosleep(void) {
  struct timespec duration = {0, WAIT_MS * 1000000L};
  nanosleep(&duration, NULL);
  printf("nanosleep 0\n");
}
NOINLINE void sleep_with_usleep(void) {
  usleep(WAIT_MS * 1000);
  printf("usleep 0\n");
}

// ---- poll and epoll on a pipe nobody writes
NOINLINE void wait_with_poll(void) {
  int fds[2];
  (void)!pipe(fds);
  struct pollfd item = {fds[0], POLLIN, 0};
  poll(&item, 1, WAIT_MS);
  printf("poll %d\n", fds[0]);
}
NOINLINE void wait_with_epoll(void) {
  int fds[2];
  (void)!pipe(fds);
  int epoll = epoll_create1(0);
  struct epoll_event event = {.events = EPOLLIN};
  epoll_ctl(epoll, EPOLL_CTL_ADD, fds[0], &event);
  epoll_wait(epoll, &event, 1, WAIT_MS);
  printf("epoll_wait %d\n", epoll);
}

// ---- a semaphore, a thread, a futex
static sem_t semaphore;
static void post_semaphore(void) { sem_post(&semaphore); }
NOINLINE void wait_on_semaphore(void) {
  sem_init(&semaphore, 0, 0);
  pthread_t t = start_helper(post_semaphore);
  sem_wait(&semaphore);
  pthread_join(t, NULL);
  printf("semaphore %p\n", (void*)&semaphore);
}

static void* nap(void* unused) {
  (void)unused;
  usleep(WAIT_MS * 1000);
  return NULL;
}
NOINLINE void wait_for_thread(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, nap, NULL);
  pthread_join(thread, NULL);
  printf("thread %#lx\n", (unsigned long)thread);
}

static uint32_t futex_word;
NOINLINE void wait_on_futex(void) {
  struct timespec timeout = {0, WAIT_MS * 1000000L};
  long result = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &timeout, NULL, 0);
  printf("futex %p %s\n", (void*)&futex_word, result == -1 && errno == ETIMEDOUT ? "timed-out" : "woken");
}

// ---- calls that do not wait
NOINLINE void short_calls(void) {
  static pthread_mutex_t free_mutex = PTHREAD_MUTEX_INITIALIZER;
  for (int i = 0; i < 200; ++i) {
    pthread_mutex_lock(&free_mutex);
    pthread_mutex_unlock(&free_mutex);
    poll(NULL, 0, 0);
    usleep(0);
  }
  printf("short 200\n");
}

// ---- processes: a forked child's waits are its own, a vfork child's are
// nobody's (it borrows the parent's memory, rings included), an exec'd
// image's are its own.
NOINLINE void fork_child_sleeps(void) { usleep(WAIT_MS * 1000); }
NOINLINE void vfork_child_sleeps(void) { usleep(WAIT_MS * 1000); }
NOINLINE void exec_image_sleeps(void) { usleep(WAIT_MS * 1000); }
NOINLINE void processes(const char* self) {
  pid_t child = fork();
  if (child == 0) {
    fork_child_sleeps();
    _exit(0);
  }
  waitpid(child, NULL, 0);
  child = vfork();
  if (child == 0) {
    vfork_child_sleeps();
    _exit(0);
  }
  waitpid(child, NULL, 0);
  child = fork();
  if (child == 0) {
    execl(self, self, "exec-image", (char*)NULL);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  printf("processes %d\n", status);
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "short") == 0) {
    short_calls();
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "processes") == 0) {
    processes(argv[0]);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "exec-image") == 0) {
    exec_image_sleeps();
    return 0;
  }
  wait_on_mutex();
  wait_on_condition();
  wait_on_pipe();
  wait_on_pipe_fortified();
  wait_on_socket();
  sleep_with_nanosleep();
  sleep_with_usleep();
  wait_with_poll();
  wait_with_epoll();
  wait_on_semaphore();
  wait_for_thread();
  wait_on_futex();
  short_calls();
  return 0;
}
