// What a call stack costs the traced thread (figure f of run_benchmarks.py):
// attach_stacks() as a hook calls it - the native stack (a stored walk
// checked against the stack, or a walk), the lock-free id lookup, the
// CallStack record - at several stack depths; the same when two call sites
// alternate at one stack position, and when the stack sits at a position
// the thread has not seen recently (so it is walked); and, for where the
// time goes, the shim's walker alone and libunwind's unw_backtrace alone.
// In-process, with the shim's core recording to a temporary directory, no
// CUDA involved. The depth is the number of frames captured (the call chain
// is lengthened by recursion in stack_depth_lib.cpp) with the default depth
// limit of 32: the 64-frame case is cut to 32 frames, as deep stacks are in
// practice.
#include <alloca.h>
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "preload/config.h"
#include "preload/process/lifecycle.h"
#include "preload/stacks/native_unwinder.h"
#include "preload/stacks/stacks.h"

namespace {

using proflaunch::format::StackPoint;
using proflaunch::stacks::NativeWalker;

extern "C" void bench_at_depth(int remaining, void (*body)(void*), void* context);

void at_depth(int remaining, const std::function<void()>& body) {
  bench_at_depth(remaining, [](void* f) { (*static_cast<const std::function<void()>*>(f))(); },
                 const_cast<std::function<void()>*>(&body));
}

uint32_t frames_here() {
  uint64_t frames[proflaunch::kMaxStackDepth];
  return proflaunch::stacks::capture_native_stack(frames, proflaunch::kMaxStackDepth, NativeWalker::kLibunwind).count;
}

// Recursion that brings the captured stack to `frames` frames (the frames
// of this executable are left out, as the shim's are in a hook).
int recursion_for(uint32_t frames) {
  const uint32_t base = frames_here() + 1;  // the innermost bench_at_depth
  return frames > base ? static_cast<int>(frames - base) : 0;
}

uint32_t kept_at_default_depth() { return std::min<uint32_t>(frames_here(), proflaunch::kDefaultStackDepth); }

void BM_AttachStacks(benchmark::State& state) {
  const auto depth = static_cast<uint32_t>(state.range(0));
  uint32_t captured = 0;
  at_depth(recursion_for(depth), [&] {
    uint64_t correlation = 1;
    captured = kept_at_default_depth();
    proflaunch::stacks::attach_stacks(correlation++, StackPoint::kLaunch);  // defines it
    for (auto _ : state) proflaunch::stacks::attach_stacks(correlation++, StackPoint::kLaunch);
  });
  state.counters["frames"] = captured;
}

__attribute__((noinline)) void attach_from_site_a(uint64_t correlation) {
  proflaunch::stacks::attach_stacks(correlation, StackPoint::kLaunch);
  asm volatile("" ::: "memory");
}
__attribute__((noinline)) void attach_from_site_b(uint64_t correlation) {
  proflaunch::stacks::attach_stacks(correlation, StackPoint::kLaunch);
  asm volatile("" ::: "memory");
}

// Two call sites, one after the other, at the same stack position: each
// capture first meets the other site's stored walk.
void BM_AttachStacksTwoSites(benchmark::State& state) {
  const auto depth = static_cast<uint32_t>(state.range(0));
  uint32_t captured = 0;
  at_depth(recursion_for(depth), [&] {
    uint64_t correlation = 1;
    captured = kept_at_default_depth();
    for (auto _ : state) {
      if (correlation & 1) attach_from_site_a(correlation++);
      else attach_from_site_b(correlation++);
    }
  });
  state.counters["frames"] = captured;
}

// The same stack each time, at one of 4096 stack positions in turn: more
// than a thread's stored walks hold, so every capture walks.
__attribute__((noinline)) void attach_shifted(size_t bytes, uint64_t correlation) {
  void* shift = alloca(bytes);
  benchmark::DoNotOptimize(shift);
  proflaunch::stacks::attach_stacks(correlation, StackPoint::kLaunch);
  asm volatile("" ::: "memory");
}

void BM_AttachStacksUnseenPosition(benchmark::State& state) {
  const auto depth = static_cast<uint32_t>(state.range(0));
  uint32_t captured = 0;
  at_depth(recursion_for(depth), [&] {
    uint64_t correlation = 1;
    captured = kept_at_default_depth();
    for (auto _ : state) {
      attach_shifted(16 * (correlation % 4096), correlation);
      ++correlation;
    }
  });
  state.counters["frames"] = captured;
}

void native_stack_only(benchmark::State& state, NativeWalker walker) {
  const auto depth = static_cast<uint32_t>(state.range(0));
  uint32_t captured = 0;
  at_depth(recursion_for(depth), [&] {
    uint64_t frames[proflaunch::kMaxStackDepth];
    for (auto _ : state) {
      captured = proflaunch::stacks::capture_native_stack(frames, proflaunch::kDefaultStackDepth, walker).count;
      benchmark::DoNotOptimize(frames);
    }
  });
  state.counters["frames"] = captured;
}
void BM_WalkerOnly(benchmark::State& state) { native_stack_only(state, NativeWalker::kWalkOnly); }
void BM_UnwBacktraceOnly(benchmark::State& state) { native_stack_only(state, NativeWalker::kLibunwind); }

BENCHMARK(BM_AttachStacks)->Arg(8)->Arg(16)->Arg(32)->Arg(64);
BENCHMARK(BM_AttachStacksTwoSites)->Arg(8)->Arg(32);
BENCHMARK(BM_AttachStacksUnseenPosition)->Arg(8)->Arg(32);
BENCHMARK(BM_WalkerOnly)->Arg(8)->Arg(16)->Arg(32)->Arg(64);
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
