// The device metrics of a trace (the launcher's sampler section), summed up
// per device while the pass streams: for each gauge its time-weighted
// distribution (a value holds until the metric's next sample), so the mean
// and percentiles are over time, not over samples; how long the clocks were
// held down and why; the instants (XID, ECC). Memory grows with the number
// of distinct values of a metric, never with the number of samples.
// `stats --section gpu-metrics`, the device-state recommendation, the SQL
// table and the report read it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

// NVML's clock event reasons that mean the device was held below the clock
// it asked for (not idle, not a clock the user set).
struct ThrottleReason {
  uint64_t bit;
  const char* name;
};
inline constexpr ThrottleReason kThrottleReasons[] = {
    {0x4, "power cap (software)"},      {0x8, "hardware slowdown"},
    {0x20, "thermal (software)"},       {0x40, "thermal (hardware)"},
    {0x80, "power brake (hardware)"},
};
// ROCm SMI's gpu_metrics throttle_status (AMD, "throttle_status"): the SMU
// firmware's bits, whose meaning differs between ASICs (the amdgpu driver's
// per-ASIC THROTTLER_* tables; ROCm 5.2's API has no ASIC-independent
// field). Any bit set is a throttled time, named by this reason.
inline constexpr const char* kAmdThrottleReason = "firmware throttle status (ASIC-specific bits)";

struct MetricSummary {
  std::string name;  // "gpu_utilization"
  std::string unit;
  uint16_t link = 0xFFFF;
  bool instant = false;
  uint64_t samples = 0;
  uint64_t covered_ns = 0;  // time the values held (gauges)
  double mean = 0;
  uint64_t p50 = 0, p99 = 0, max = 0, min = 0;
  uint64_t last = 0;
  std::vector<std::pair<uint64_t, uint64_t>> instants;  // (time ns, value)
};

struct DeviceMetrics {
  uint64_t section = 0;  // the sampler's section
  int32_t device = 0;    // its DeviceInfo
  std::string label;     // "GPU 0 (pid 123)" as traced processes saw it, else "NVML device 1"
  std::string uuid;      // 32 hex digits, "" when unknown
  std::vector<MetricSummary> metrics;
  std::vector<std::pair<std::string, std::string>> unsupported;  // (metric, reason)
  uint64_t throttled_ns = 0;  // any kThrottleReasons bit set
  std::map<std::string, uint64_t> throttled_by;  // reason -> ns
  uint64_t sampled_ns = 0;    // first to last sample of throttle_reasons

  const MetricSummary* find(std::string_view name) const;
};

class GpuMetricSeries : public interpret::Consumer {
 public:
  void on_gpu_metric_sample(const interpret::Event<format::GpuMetricSampleRecord>& sample) override;
  // Every sampled device, in the sampler's order.
  std::vector<DeviceMetrics> finish(const TraceModel& model) const;
  bool empty() const { return series_.empty(); }

 private:
  struct Series {
    uint64_t samples = 0;
    bool open = false;
    uint64_t last_ns = 0, last_value = 0;
    uint64_t first_ns = 0;
    std::map<uint64_t, uint64_t> weight_ns;  // value -> time it held
    uint64_t max = 0, min = UINT64_MAX;
    std::vector<std::pair<uint64_t, uint64_t>> instants;
    std::map<std::string, uint64_t> throttled_by;  // throttle_reasons / throttle_status only
    uint64_t throttled_ns = 0;
  };
  std::map<std::pair<uint64_t, uint32_t>, Series> series_;  // (section, metric)
};

}  // namespace proflaunch::tools::stats
