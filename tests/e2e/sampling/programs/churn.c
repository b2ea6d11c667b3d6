/* Thread churn, fork and exec with sampling on: 40 short threads that each
   burn a little CPU, then a fork whose child burns CPU and execs `argv[1]`
   (if given) with "child-exec", then waits. Prints what it did. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void burn(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  volatile unsigned long x = 0;
  do {
    for (int i = 0; i < 10000; ++i) x += i;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

static void* worker(void* arg) { (void)arg; burn(0.01); return NULL; }

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "child-exec") == 0) {
    burn(0.1);
    printf("exec'd child done\n");
    return 0;
  }
  if (argc > 2 && strcmp(argv[1], "spin") == 0) {
    FILE* pid_file = fopen(argv[2], "w");
    fprintf(pid_file, "%d\n", (int)getpid());
    fclose(pid_file);
    printf("spinning\n");
    fflush(stdout);
    for (;;) burn(0.05);
  }
  for (int round = 0; round < 4; ++round) {
    pthread_t threads[10];
    for (int i = 0; i < 10; ++i) pthread_create(&threads[i], NULL, worker, NULL);
    for (int i = 0; i < 10; ++i) pthread_join(threads[i], NULL);
  }
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    burn(0.1);
    execl("/proc/self/exe", argv[0], "child-exec", (char*)NULL);
    _exit(9);
  }
  int status = 0;
  waitpid(child, &status, 0);
  pid_t vchild = vfork();
  if (vchild == 0) {
    execl("/bin/true", "true", (char*)NULL);
    _exit(9);
  }
  int vstatus = 0;
  waitpid(vchild, &vstatus, 0);
  burn(0.05);
  printf("threads 40, child status %d, vfork child status %d\n", WEXITSTATUS(status), WEXITSTATUS(vstatus));
  return 0;
}
