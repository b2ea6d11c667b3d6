// What a call stack costs the traced thread (figure f of run_benchmarks.py):
// attach_stacks() as a hook calls it - unw_backtrace, the shim-frame filter,
// the hash, the lock-free lookup of a stack already defined, the CallStack
// record - at several stack depths; and unw_backtrace alone, for where the
// time goes. In-process, with the shim's core recording to a temporary
// directory, no CUDA involved. The depth is the number of frames captured
// (the call chain is lengthened by recursion in stack_depth_lib.cpp) with the
// default depth limit of 32: the 64-frame case is cut to 32 frames, as deep
// stacks are in practice.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "preload/config.h"
#include "preload/runtime.h"
#include "preload/stacks/native_unwinder.h"
#include "preload/stacks/stacks.h"

namespace {

using proflaunch::format::StackPoint;

extern "C" void bench_at_depth(int remaining, void (*body)(void*), void* context);

void at_depth(int remaining, const std::function<void()>& body) {
  bench_at_depth(remaining, [](void* f) { (*static_cast<const std::function<void()>*>(f))(); },
                 const_cast<std::function<void()>*>(&body));
}

uint32_t frames_here() {
  uint64_t frames[proflaunch::kMaxStackDepth];
  return proflaunch::stacks::capture_native_stack(frames, proflaunch::kMaxStackDepth).count;
}

// Recursion that brings the captured stack to `frames` frames (the frames
// of this executable are left out, as the shim's are in a hook).
int recursion_for(uint32_t frames) {
  const uint32_t base = frames_here() + 1;  // the innermost bench_at_depth
  return frames > base ? static_cast<int>(frames - base) : 0;
}

void BM_AttachStacks(benchmark::State& state) {
  const auto depth = static_cast<uint32_t>(state.range(0));
  uint32_t captured = 0;
  at_depth(recursion_for(depth), [&] {
    uint64_t correlation = 1;
    captured = std::min<uint32_t>(frames_here(), proflaunch::kDefaultStackDepth);
    proflaunch::stacks::attach_stacks(correlation++, StackPoint::kLaunch);  // defines it
    for (auto _ : state) proflaunch::stacks::attach_stacks(correlation++, StackPoint::kLaunch);
  });
  state.counters["frames"] = captured;
}

void BM_UnwBacktraceOnly(benchmark::State& state) {
  const auto depth = static_cast<uint32_t>(state.range(0));
  uint32_t captured = 0;
  at_depth(recursion_for(depth), [&] {
    uint64_t frames[proflaunch::kMaxStackDepth];
    for (auto _ : state) {
      captured = proflaunch::stacks::capture_native_stack(frames, proflaunch::kDefaultStackDepth).count;
      benchmark::DoNotOptimize(frames);
    }
  });
  state.counters["frames"] = captured;
}

BENCHMARK(BM_AttachStacks)->Arg(8)->Arg(16)->Arg(32)->Arg(64);
BENCHMARK(BM_UnwBacktraceOnly)->Arg(8)->Arg(16)->Arg(32)->Arg(64);

}  // namespace

int main(int argc, char** argv) {
  char parts[] = "/tmp/proflaunch-stack-bench-XXXXXX";
  if (mkdtemp(parts) == nullptr) return 1;
  proflaunch::Config config;
  std::snprintf(config.parts_dir, sizeof config.parts_dir, "%s", parts);
  config.buffer_bytes_per_thread = proflaunch::kDefaultBufferBytes;
  config.flush_interval_ms = proflaunch::kDefaultFlushIntervalMs;
  config.stack_points = proflaunch::kStacksAll;
  config.stack_depth = proflaunch::kDefaultStackDepth;
  if (!proflaunch::runtime::start(config)) return 1;
  proflaunch::stacks::start_stacks(config);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  proflaunch::runtime::finish();
  std::system((std::string("rm -rf ") + parts).c_str());
  return 0;
}
