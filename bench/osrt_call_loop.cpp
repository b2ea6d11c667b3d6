// Figure w: what the OS runtime hooks add to a blocking call that does not
// block (preload/osrt). Run untraced and under the shim (run_benchmarks.py):
// an uncontended pthread_mutex_lock + unlock pair (the lock is hooked, the
// unlock is not), and poll with a timeout of 0. The *Libc variants call
// libc's own definitions through its handle, past any preload: the same
// loop without the hook, in the same process.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>

namespace {

template <typename Function>
Function* libc_function(const char* name) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return reinterpret_cast<Function*>(dlsym(libc, name));
}

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

void BM_MutexLockUnlock(benchmark::State& state) {
  for (auto _ : state) {
    pthread_mutex_lock(&g_mutex);
    pthread_mutex_unlock(&g_mutex);
  }
}
BENCHMARK(BM_MutexLockUnlock);

void BM_MutexLockUnlockLibc(benchmark::State& state) {
  auto* lock = libc_function<int(pthread_mutex_t*)>("pthread_mutex_lock");
  for (auto _ : state) {
    lock(&g_mutex);
    pthread_mutex_unlock(&g_mutex);
  }
}
BENCHMARK(BM_MutexLockUnlockLibc);

void BM_PollZero(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(poll(nullptr, 0, 0));
}
BENCHMARK(BM_PollZero);

void BM_PollZeroLibc(benchmark::State& state) {
  auto* real_poll = libc_function<int(pollfd*, nfds_t, int)>("poll");
  for (auto _ : state) benchmark::DoNotOptimize(real_poll(nullptr, 0, 0));
}
BENCHMARK(BM_PollZeroLibc);

}  // namespace

BENCHMARK_MAIN();
