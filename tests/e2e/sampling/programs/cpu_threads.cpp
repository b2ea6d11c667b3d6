// Two threads busy for different CPU times and one blocked thread; prints
// each one's tid and CPU time at its end ("tid <tid> cpu_ns <ns> <role>").
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}

std::atomic<uint64_t> g_sink{0};

__attribute__((noinline)) void burn_cpu_for(uint64_t cpu_ns) {
  const uint64_t start = thread_cpu_ns();
  uint64_t x = 1;
  while (thread_cpu_ns() - start < cpu_ns)
    for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  g_sink += x;
}

struct Job {
  uint64_t cpu_ns;
  const char* role;
  char line[128];
};

void* run(void* raw) {
  auto* job = static_cast<Job*>(raw);
  if (job->cpu_ns != 0) {
    burn_cpu_for(job->cpu_ns);
  } else {
    usleep(400000);  // blocked: no CPU time, no sample
  }
  snprintf(job->line, sizeof job->line, "tid %ld cpu_ns %llu %s\n", syscall(SYS_gettid),
           static_cast<unsigned long long>(thread_cpu_ns()), job->role);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const double scale = argc > 1 ? atof(argv[1]) : 1.0;
  Job jobs[3] = {{static_cast<uint64_t>(600e6 * scale), "long", {}},
                 {static_cast<uint64_t>(250e6 * scale), "short", {}},
                 {0, "blocked", {}}};
  pthread_t threads[3];
  for (int i = 0; i < 3; ++i) pthread_create(&threads[i], nullptr, run, &jobs[i]);
  for (int i = 0; i < 3; ++i) pthread_join(threads[i], nullptr);
  for (auto& job : jobs) fputs(job.line, stdout);
  return 0;
}
