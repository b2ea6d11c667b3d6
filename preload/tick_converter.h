// Converts the ticks hooks write into record spans (clock.h) to
// CLOCK_MONOTONIC ns, on the writer thread.
//
// With the TSC, the writer samples (CLOCK_MONOTONIC, TSC) at the start of
// every cycle. A sample brackets the clock read between two TSC reads and is
// retaken when the bracket is wide (a preemption), so each is good to a few
// tens of ns. Ticks between the two latest samples - the records a cycle
// drains were made since the previous cycle - are interpolated between them;
// the mapping is then continuous across cycles (consecutive segments share a
// sample) and monotonic. Ticks after the latest sample are extrapolated with
// the rate measured since the shim started (the longest baseline). The
// first sample is the origin the shim took at start (clock.h), so the
// writer's first cycle already interpolates over a measured segment.
//
// Ring records of a hook carry ticks in their span, and LOST records made by
// a ring carry ticks in first/last; the writer converts both.
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/clock.h"

namespace proflaunch {

class TickConverter {
 public:
  // Takes a new (clock, ticks) sample. Call at the start of each cycle.
  void sample() noexcept;

  uint64_t to_ns(uint64_t ticks) const noexcept;

  // Rewrites the ticks of a record drained from a ring to ns: the span of a
  // hook record (ApiCall, KernelLaunch, MemoryCopy, MemorySet, Synchronize,
  // ObjectLifecycle) and the bounds of a LOST record; other kinds are left
  // alone.
  void convert_record(void* record, uint16_t bytes) const noexcept;

 private:
  using Sample = TickSample;
  int samples_ = 0;
  Sample first_{}, previous_{}, last_{};
  double long_rate_ = 1.0;  // ns per tick since the first sample
};

}  // namespace proflaunch
