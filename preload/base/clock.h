// The one clock of the trace: CLOCK_MONOTONIC in nanoseconds.
//
// Measured on the 2-vCPU build machines (tests/unit/preload/emit_benchmark):
// clock_gettime(CLOCK_MONOTONIC) through the vDSO costs ~20 ns, rdtsc ~9 ns.
// rdtsc would need a calibrated conversion to MONOTONIC for every timestamp
// field of every record kind (records.h promises MONOTONIC ns), and the
// conversion is wrong on machines whose TSC is not invariant; 11 ns per
// timestamp is not worth that. CLOCK_MONOTONIC_COARSE is cheaper still but
// ticks every 4 ms, useless for API spans. No syscall: the vDSO reads the
// clock in user space (under a seccomp filter or in containers without a vDSO
// clock source it becomes a syscall, which is slower but still correct).
#pragma once

#include <x86intrin.h>

#include <cstdint>
#include <ctime>

namespace proflaunch {

inline uint64_t now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t clock_ns(clockid_t clock) noexcept {
  timespec ts;
  if (clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// ---- Hot-path timestamps: "ticks".
//
// Two clock reads are half of a hook's cost with clock_gettime (2 x ~22 ns);
// rdtsc costs ~9 ns. Hooks therefore write ticks into the ApiSpan of their
// records, and the writer thread converts every span to CLOCK_MONOTONIC ns
// while draining the rings (tick_converter.h), so the file only ever holds
// MONOTONIC ns. Ticks are the TSC only where the kernel itself keeps time with
// it (clocksource "tsc": invariant and synchronized across CPUs); elsewhere a
// tick is simply a CLOCK_MONOTONIC ns and the conversion is the identity.

extern bool g_ticks_are_tsc;

// A (CLOCK_MONOTONIC ns, ticks) pair taken when the tick source was chosen:
// the baseline of the writer's tick conversion, so that even records drained
// in the writer's first cycle convert with a measured rate.
struct TickSample {
  uint64_t ns;
  uint64_t ticks;
};
extern TickSample g_tick_origin;

// A (clock, ticks) pair read with the clock read bracketed by two tick reads,
// retried while the bracket is wide (a preemption between the reads).
TickSample take_tick_sample() noexcept;

// Decides the tick source once, at start (reads sysfs; not from a hook), and
// takes the origin sample.
void init_tick_source() noexcept;

inline uint64_t now_ticks() noexcept {
  if (__builtin_expect(g_ticks_are_tsc, 1)) return __rdtsc();
  return now_ns();
}

}  // namespace proflaunch
