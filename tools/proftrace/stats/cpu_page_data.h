// The report page's CPU tab data (report/page): every CPU sample with its
// thread, time, stack and whether its thread's GPU was idle then, the
// blocking calls, the distinct stacks as frame lists, and per process the
// time its launching thread's GPU was idle split into blocked, Python,
// native and unaccounted. A StatsSection so that it rides the report's one
// pass; it prints no table.
#pragma once

#include <string>

#include "tools/proftrace/stats/cpu_activity.h"
#include "tools/proftrace/stats/gpu_idle_gaps.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

class CpuPageData final : public StatsSection {
 public:
  // Samples past this are thinned evenly (each kept one then weighs more).
  static constexpr size_t kMaxSamples = 200'000;

  std::string name() const override { return "cpu-page"; }
  std::vector<interpret::Consumer*> parts() override { return {&activity_, &gaps_}; }
  void on_pass_end(const std::vector<CaptureWindow>&) override { gaps_.finish(); }
  Table finish(const TraceModel&) override { return {}; }

  // The JSON object; "" when the trace has no samples, waits or sampling state.
  std::string json(const TraceModel& model);

 private:
  CpuActivity activity_;
  GpuIdleGaps gaps_;
};

}  // namespace proflaunch::tools::stats
