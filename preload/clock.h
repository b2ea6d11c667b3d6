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

}  // namespace proflaunch
