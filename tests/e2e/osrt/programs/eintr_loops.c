// Loops of nanosleep, epoll_wait, poll, usleep and read that treat EINTR as
// an event, as programs with their own signal handling do: each EINTR is
// counted and printed, and the exit status is the number of them. With no
// signal of the program's own, untraced it prints zeros and exits 0; traced
// (CPU sampling on, whose signal must never reach these calls) the same.
// Each loop burns a little CPU between waits, so that CPU-time sampling
// timers fire around the calls.
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 40

static volatile unsigned long sink;
static void burn(void) {
  for (unsigned long i = 0; i < 300000; ++i) sink += i * i;
}

static int pipe_fds[2];
static void* writer(void* unused) {
  (void)unused;
  for (int i = 0; i < ROUNDS; ++i) {
    usleep(1000);
    (void)!write(pipe_fds[1], "x", 1);
  }
  return NULL;
}

int main(void) {
  int nanosleep_eintr = 0, epoll_eintr = 0, poll_eintr = 0, usleep_eintr = 0, read_eintr = 0;
  int epoll = epoll_create1(0);
  int idle[2];
  (void)!pipe(idle);
  struct epoll_event event = {.events = EPOLLIN};
  epoll_ctl(epoll, EPOLL_CTL_ADD, idle[0], &event);
  for (int i = 0; i < ROUNDS; ++i) {
    burn();
    struct timespec duration = {0, 1000000};
    if (nanosleep(&duration, NULL) == -1 && errno == EINTR) ++nanosleep_eintr;
    burn();
    if (epoll_wait(epoll, &event, 1, 1) == -1 && errno == EINTR) ++epoll_eintr;
    burn();
    struct pollfd item = {idle[0], POLLIN, 0};
    if (poll(&item, 1, 1) == -1 && errno == EINTR) ++poll_eintr;
    burn();
    if (usleep(1000) == -1 && errno == EINTR) ++usleep_eintr;
  }
  (void)!pipe(pipe_fds);
  pthread_t thread;
  pthread_create(&thread, NULL, writer, NULL);
  for (int i = 0; i < ROUNDS; ++i) {
    char byte;
    burn();
    while (read(pipe_fds[0], &byte, 1) == -1) {
      if (errno != EINTR) break;
      ++read_eintr;
    }
  }
  pthread_join(thread, NULL);
  printf("EINTR: nanosleep %d epoll_wait %d poll %d usleep %d read %d\n", nanosleep_eintr, epoll_eintr, poll_eintr,
         usleep_eintr, read_eintr);
  return nanosleep_eintr + epoll_eintr + poll_eintr + usleep_eintr + read_eintr;
}
