// The device metrics over time, for the report's charts: each charted gauge
// of each sampled device as its time-weighted mean in equal bins of the
// analysed span (analysed_span.h), the same bins as the overview's GPU
// activity, so the two line up on one time axis.
//
// Memory is bounded whatever the run's length: each series keeps at most
// kMaxSegments stretches of time (value x time summed), halving its
// resolution (merging neighbours) when it would keep more.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/trace_model.h"
#include "tools/proftrace/stats/gpu_metric_series.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

// The gauges charted (per device, not per link): the rest are in the
// summary table only.
inline constexpr const char* kChartedGpuMetrics[] = {
    "gpu_utilization", "memory_utilization", "memory_used", "sm_clock",  "memory_clock",
    "power",           "temperature",        "pcie_tx",     "pcie_rx",
    // CUPTI PM sampling's DEFAULT set (preload/cuda/cupti/pm_sampling_records.cpp)
    "sm_active",       "sm_occupancy",       "tensor_active", "gr_active", "dram_read", "dram_write",
};

class GpuMetricTimeline : public interpret::Consumer {
 public:
  static constexpr size_t kMaxSegments = 4096;

  void on_gpu_metric_sample(const interpret::Event<format::GpuMetricSampleRecord>& sample) override;

  // "Device metrics over time": rows (Device, Metric, Unit, Start (ns),
  // End (ns), Mean), times from `first_ns`, `bins` equal bins of
  // [first_ns, last_ns) as the overview's activity table cuts them; a bin
  // no sample covers has no row. `devices` names them (GpuMetricSeries).
  Table table(const TraceModel& model, const std::vector<DeviceMetrics>& devices, uint64_t first_ns,
              uint64_t last_ns, size_t bins) const;

  // A value held from `begin_ns` to `end_ns` (value x ns in `weighted`).
  struct Segment {
    uint64_t begin_ns, end_ns;
    double weighted;
  };
  // The mean over [begin, end) of what the segments cover (a merged segment
  // spread evenly over its stretch); false if they cover none of it.
  static bool mean_over(const std::vector<Segment>& segments, uint64_t begin, uint64_t end, double* mean);

 private:
  struct Series {
    bool open = false;
    uint64_t last_ns = 0, last_value = 0;
    std::vector<Segment> segments;
  };
  std::map<std::pair<uint64_t, uint32_t>, Series> series_;  // (section, metric)
};

}  // namespace proflaunch::tools::stats
