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
