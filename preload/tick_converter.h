// Converts the ticks hooks write into record spans (clock.h) to
// CLOCK_MONOTONIC ns, on the writer thread.
//
// With the TSC, the writer samples (CLOCK_MONOTONIC, TSC) at the start of
// every cycle. A sample brackets the clock read between two TSC reads and is
// retaken when the bracket is wide (a preemption), so each is good to a few
// tens of ns. The first sample is the origin the shim took at start
// (clock.h), so the writer's first cycle already interpolates over a
// measured segment.
//
// The mapping is one function of the tick, whenever a tick is converted: a
// record drained in one cycle and a LOST record about the moment right after
// it, drained cycles later, must come out in the order they happened.
//  - Ticks inside the retained samples (the last kHistory) are interpolated
//    in the segment that contains them: continuous, monotonic, and the same
//    answer in every cycle.
//  - A tick after the latest sample (a record made after the cycle began) is
//    extrapolated with the rate measured since the first sample (the longest
//    baseline), and the result is kept as a sample: the extrapolation becomes
//    part of the function, and the next real sample continues from it.
//  - A tick older than every retained sample (a thread that dropped records
//    and then stayed silent for a long time) is interpolated between the
//    first sample and the oldest retained one.
//
// Ring records of a hook carry ticks in their span, and LOST records made by
// a ring carry ticks in first/last; the writer converts both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/records.h"
#include "preload/clock.h"

namespace proflaunch {

class TickConverter {
 public:
  // ~10 s of history at one sample per 10 ms cycle plus the kept
  // extrapolations (at most one per drained ring and cycle).
  static constexpr size_t kHistory = 1024;

  // Takes a new (clock, ticks) sample. Call at the start of each cycle.
  void sample() noexcept;
  // Adds a measured sample; ignored unless both ticks and ns move forward
  // from the latest one (tests feed samples by hand).
  void add_sample(TickSample next) noexcept;

  // Not const: a tick after the latest sample extends the function.
  uint64_t to_ns(uint64_t ticks) noexcept;

  // Rewrites the ticks of a record drained from a ring to ns: the span of a
  // hook record (format::has_api_span) and the bounds of a LOST record;
  // other kinds are left alone.
  void convert_record(void* record, uint16_t bytes) noexcept;

  size_t retained_samples() const noexcept { return count_ < kHistory ? count_ : kHistory; }

 private:
  using Sample = TickSample;
  const Sample& retained(size_t i) const noexcept {  // 0 = oldest retained
    const size_t oldest = count_ < kHistory ? 0 : count_ - kHistory;
    return history_[(oldest + i) % kHistory];
  }
  const Sample& newest() const noexcept { return history_[(count_ - 1) % kHistory]; }
  void append(Sample s) noexcept { history_[count_++ % kHistory] = s; }

  Sample history_[kHistory]{};
  size_t count_ = 0;  // samples appended, ever
  Sample first_{};
  Sample last_measured_{};
  double long_rate_ = 1.0;  // ns per tick, first to latest measured sample
};

}  // namespace proflaunch
