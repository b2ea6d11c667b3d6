// Device metrics on `proftrace convert`'s timeline: each metric the
// launcher's sampler recorded (GpuMetricSample), and each a traced process
// sampled itself (CUPTI PM sampling: "SM active %", on that process's own
// device, no UUID needed), becomes a counter track of
// the device's GPU process, beside its streams: "GPU utilization %",
// "SM clock MHz", "Memory used bytes", "NVLink 0 tx KiB/s"... The device is
// found by UUID, so the tracks join the GPU process of the traced processes
// that used it (TrackLayout::gpu_process_pid). XID and ECC errors are
// instants shown as a counter that is the error's value for 1 ms.
#pragma once

#include <cstdint>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::tools::timeline {

class GpuMetricCounters : public interpret::Consumer {
 public:
  explicit GpuMetricCounters(TrackLayout& layout) : layout_(layout) {}

  void on_gpu_metric_sample(const interpret::Event<format::GpuMetricSampleRecord>& sample) override;

  uint64_t counter_events() const { return counter_events_; }

 private:
  TrackLayout& layout_;
  uint64_t counter_events_ = 0;
};

// "GPU utilization" for "gpu_utilization" (the metric's name otherwise), with
// the link for per-link metrics.
std::string gpu_metric_label(std::string_view name, uint16_t link);

}  // namespace proflaunch::tools::timeline
