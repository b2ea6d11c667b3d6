// libbench_python_stacks.so: the shim's core and stacks, driven from Python
// by python_stack_bench.py (figure g of run_benchmarks.py). Python calls it
// through ctypes - CDLL releases the GIL around the call, PyDLL keeps it - so
// the Python frames captured are those of the calling script, read exactly
// as in a hook.
#include <cstdio>
#include <cstring>
#include <ctime>

#include "preload/config.h"
#include "preload/process/lifecycle.h"
#include "preload/stacks/native_unwinder.h"
#include "preload/stacks/python_frames.h"
#include "preload/stacks/stack_catalog.h"
#include "preload/stacks/stacks.h"

#define BENCH_API extern "C" __attribute__((visibility("default")))

namespace {

double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

}  // namespace

// Starts recording into `parts_dir`. 0 on success.
BENCH_API int bench_stacks_start(const char* parts_dir) {
  proflaunch::Config config;
  std::snprintf(config.parts_dir, sizeof config.parts_dir, "%s", parts_dir);
  config.buffer_bytes_per_thread = proflaunch::kDefaultBufferBytes;
  config.flush_interval_ms = proflaunch::kDefaultFlushIntervalMs;
  config.stack_points = proflaunch::kStacksAll;
  config.stack_depth = proflaunch::kDefaultStackDepth;
  if (!proflaunch::runtime::start(config)) return 1;
  proflaunch::stacks::start_stacks(config);
  return proflaunch::stacks::stacks_enabled(proflaunch::format::StackPoint::kLaunch) ? 0 : 2;
}

BENCH_API void bench_stacks_finish() { proflaunch::runtime::finish(); }

// Python frames the calling thread has (to check the walk works here).
BENCH_API int bench_python_frames() {
  proflaunch::stacks::PythonFrameKey keys[proflaunch::kMaxStackDepth];
  return static_cast<int>(proflaunch::stacks::capture_python_keys(keys, proflaunch::kMaxStackDepth).count);
}

// ns per iteration of: 0 the whole attach_stacks (native + Python + the
// CallStack record), 1 the Python stack alone (walk + lookup), 2 the native
// stack alone (unw_backtrace + lookup).
BENCH_API double bench_stacks_ns(int iterations, int what) {
  using namespace proflaunch::stacks;
  uint64_t correlation = 1;
  const double start = now_ns();
  for (int i = 0; i < iterations; ++i) {
    if (what == 0) {
      attach_stacks(correlation++, proflaunch::format::StackPoint::kLaunch);
    } else if (what == 1) {
      PythonFrameKey keys[proflaunch::kDefaultStackDepth];
      const PythonKeys python = capture_python_keys(keys, proflaunch::kDefaultStackDepth);
      if (python.count != 0) python_stack_id(keys, python);
    } else {
      uint64_t frames[proflaunch::kDefaultStackDepth];
      const NativeStack native = capture_native_stack(frames, proflaunch::kDefaultStackDepth);
      if (native.count != 0) native_stack_id(frames, native);
    }
  }
  return (now_ns() - start) / iterations;
}

// ---- CPU sampling: the signal handler's cost (figure s) -------------------
#include <signal.h>
#include <ucontext.h>

#include "preload/sampling/sampler_internal.h"
#include "preload/sampling/signal_safe_modules.h"
#include "preload/sampling/thread_sampler.h"

// ns per sample of the sampling handler, called directly with the calling
// thread's own context (as if its timer fired here): the native walk of
// `depth` frames, the Python frames of the calling script, hashes, the entry.
// The stack repeats, as in a loop: after the first call the entry carries
// hashes only. The buffer is drained (nothing written) every 64 samples.
BENCH_API double bench_sample_handler_ns(int iterations, int depth) {
  using namespace proflaunch::sampling;
  static bool ready = [] {
    const int signal_number = SIGRTMAX - 2;
    g_sampler.signal_number = signal_number;
    g_sampler.period_ns = 3600ull * 1000000000ull;  // armed, never fires during the run
    if (!init_thread_samplers(signal_number, g_sampler.period_ns)) return false;
    proflaunch::stacks::init_python_frames();
    refresh_code_ranges(true);
    g_sampler.state.store(static_cast<uint8_t>(proflaunch::format::CpuSamplingState::kOn));
    return true;
  }();
  if (!ready) return -1;
  arm_current_thread(g_sampler.signal_number, g_sampler.period_ns);
  ThreadSampler* state = tls_thread_sampler;
  if (state == nullptr) return -2;
  g_sampler.depth = static_cast<uint32_t>(depth);
  ucontext_t context;
  getcontext(&context);
  siginfo_t info{};
  info.si_code = SI_TIMER;
  info.si_value.sival_ptr = state;
  const double start = now_ns();
  for (int i = 0; i < iterations; ++i) {
    on_sampling_signal(g_sampler.signal_number, &info, &context);
    if ((i & 63) == 63) state->buffer.drain([](const SampleEntry&) {});
  }
  const double elapsed = now_ns() - start;
  state->buffer.drain([](const SampleEntry&) {});
  return elapsed / iterations;
}

// Frames of the last sample: native, Python (to check the bench measures
// what it says).
BENCH_API int bench_sample_frames(int python) {
  using namespace proflaunch::sampling;
  ThreadSampler* state = tls_thread_sampler;
  if (state == nullptr) return -1;
  ucontext_t context;
  getcontext(&context);
  siginfo_t info{};
  info.si_code = SI_TIMER;
  info.si_value.sival_ptr = state;
  on_sampling_signal(g_sampler.signal_number, &info, &context);
  int frames = -1;
  state->buffer.drain([&](const SampleEntry& e) { frames = python ? e.python_count : e.native_count; });
  return frames;
}
