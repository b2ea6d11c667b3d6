/* A program that uses the real-time signal the sampler would use: it
   installs its own handler on SIGRTMAX-2 (signal() or sigaction() by
   argument), queues the signal to itself 20 times while busy, and prints how
   many arrived with its value. The sampler must step back. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_count = 0, g_bad = 0;

static void on_signal(int s, siginfo_t* info, void* c) {
  (void)s; (void)c;
  if (info->si_code == SI_QUEUE && info->si_value.sival_int == 42) g_count++;
  else g_bad++;
}
static void on_plain(int s) { (void)s; g_count++; }

static void burn(double seconds) {
  struct timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  volatile unsigned long x = 0;
  do {
    for (int i = 0; i < 100000; ++i) x += i;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  } while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char** argv) {
  int sig = SIGRTMAX - 2;
  struct sigaction before;
  sigaction(sig, NULL, &before);
  printf("before: %s\n", before.sa_handler == SIG_DFL ? "default" : "other");
  burn(0.1);
  if (argc > 1 && strcmp(argv[1], "signal") == 0) {
    signal(sig, on_plain);
  } else {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
  }
  burn(0.1);
  for (int i = 0; i < 20; ++i) {
    union sigval v;
    v.sival_int = 42;
    sigqueue(getpid(), sig, v);
    burn(0.005);
  }
  printf("received %d, unexpected %d\n", (int)g_count, (int)g_bad);
  return g_bad == 0 ? 0 : 1;
}
