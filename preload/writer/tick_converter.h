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
//  - A tick after the latest sample (a record made after the cycle began)
//    makes the converter take a new sample first: the writer converts a
//    record only after it loaded the ring's head, so every record of that
//    drain is older than the new sample. At most one sample per ring drain.
//    (Only if the clock did not move is the tick extrapolated, with the rate
//    since the first sample, and nothing is kept.)
//  - A tick older than every retained sample (a thread that dropped records
//    and then stayed silent for long) is interpolated between the first
//    sample and the oldest retained one.
//
// Ring records of a hook carry ticks in their span, and LOST records made by
// a ring carry ticks in first/last; the writer converts both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/records.h"
#include "preload/base/clock.h"

namespace proflaunch {

class TickConverter {
 public:
  // Samples kept: one per cycle (10 ms at most) plus at most one per drained
  // ring and cycle; 1024 cover seconds for a few threads and over 100 ms
  // for a hundred busy ones, while records wait at most one cycle.
  static constexpr size_t kHistory = 1024;

  // Where samples come from (take_tick_sample; tests script a clock).
  using SampleSource = TickSample (*)();
  explicit TickConverter(SampleSource source = &take_tick_sample) noexcept : source_(source) {}

  // Takes a new (clock, ticks) sample. Call at the start of each cycle.
  void sample() noexcept;
  // Adds a measured sample; ignored unless both ticks and ns move forward
  // from the latest one (tests feed samples by hand).
  void add_sample(TickSample next) noexcept;

  // Not const: a tick after the latest sample takes a new sample.
  uint64_t to_ns(uint64_t ticks) noexcept;

  // Rewrites the ticks of a record drained from a ring to ns: the span of a
  // hook record (format::has_api_span) and the bounds of a LOST record;
  // other kinds are left alone.
  void convert_record(void* record, uint16_t bytes) noexcept;

  size_t retained_samples() const noexcept { return count_ < kHistory ? count_ : kHistory; }

 private:
  using Sample = TickSample;
  // A sample and the rate of the segment that starts at it, so that every
  // conversion of a tick in that segment computes the same product.
  struct Entry {
    uint64_t ns;
    uint64_t ticks;
    double rate;  // ns per tick to the next sample (unset for the newest)
  };
  const Entry& retained(size_t i) const noexcept {  // 0 = oldest retained
    const size_t oldest = count_ < kHistory ? 0 : count_ - kHistory;
    return history_[(oldest + i) % kHistory];
  }
  const Entry& newest() const noexcept { return history_[(count_ - 1) % kHistory]; }

  SampleSource source_;
  Entry history_[kHistory]{};
  size_t count_ = 0;  // samples appended, ever
  Sample first_{};
  double long_rate_ = 1.0;  // ns per tick, first to latest sample
};

}  // namespace proflaunch
