// The simulated device clock IS the host's CLOCK_MONOTONIC: event timestamps and
// modelled operation start/end times are CLOCK_MONOTONIC nanoseconds, directly
// comparable with host timestamps taken by any other code in the process.
#pragma once

#include <cerrno>
#include <cstdint>
#include <ctime>

namespace simgpu {

inline int64_t monotonic_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline void sleep_until_monotonic_ns(int64_t deadline_ns) {
  if (monotonic_now_ns() >= deadline_ns) return;  // behind schedule: no syscall
  timespec ts{time_t(deadline_ns / 1'000'000'000), long(deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace simgpu
