// The time stats analyse: from the first to the last event of the trace
// (the calls each process made while it recorded, and GPU work). The
// overview's steps and activity bins and the report's device metrics over
// time all start at first_ns(), so their time axes line up.
#pragma once

#include <algorithm>
#include <cstdint>

#include "tools/proftrace/interpret/events.h"

namespace proflaunch::tools::stats {

class AnalysedSpan : public interpret::Consumer {
 public:
  void on_any_call(const interpret::Call& call) override {
    // A call carried into a ring dump from before its window is not the window's.
    if (!(call.span.flags & format::kApiCarried)) extend(call.span.begin_ns, call.span.end_ns);
  }
  void on_gpu_work_read(const interpret::GpuWork& work) override {
    extend(work.activity.start_ns, work.activity.end_ns);
  }

  // UINT64_MAX and 0 while nothing was seen.
  uint64_t first_ns() const { return first_ns_; }
  uint64_t last_ns() const { return last_ns_; }

 private:
  void extend(uint64_t begin_ns, uint64_t end_ns) {
    if (end_ns < begin_ns) return;
    first_ns_ = std::min(first_ns_, begin_ns);
    last_ns_ = std::max(last_ns_, end_ns);
  }

  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;
};

}  // namespace proflaunch::tools::stats
