// What CUPTI PM sampling (--gpu-metrics-counters) samples and how its
// decoded values become records: the DEFAULT metric set, the user's LIST,
// each metric's name and unit in the trace, and the GpuMetricSample records
// of one decode pass. No CUPTI call here (pm_sampling.cpp makes them), so
// the record path is tested with hand-built values (tests/unit/preload).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "preload/writer/writer_tasks.h"

namespace proflaunch::cuda {

struct PmMetric {
  std::string cupti_name;  // what CUPTI's host API is given
  std::string name;        // GpuMetricDef's name in the trace
  std::string unit;        // "%", "B/s", or "" (the value as CUPTI evaluates it)
};

// DEFAULT: the device-level PM metrics NVIDIA's data-center tools sample
// (DCGM's profiling fields, Nsight Systems' GPU metrics): graphics engine
// active, SM active, SM occupancy (warps active), tensor pipe active, DRAM
// read and write throughput, PCIe and NVLink in both directions.
std::vector<PmMetric> default_pm_metrics();

// DEFAULT (any case) or a comma list of CUPTI metric names (each its own
// name in the trace, unit from its name: "pct" -> %, bytes "per_second" ->
// B/s). Empty for an empty setting.
std::vector<PmMetric> choose_pm_metrics(std::string_view setting);
bool pm_metrics_are_default(std::string_view setting);

// A CUPTI value as the record's uint64: rounded, negative and NaN as 0.
uint64_t pm_record_value(double value);

// One decoded sample: its interval on CUPTI's clock and one value per
// metric, in the order of the metric ids it is written with.
struct PmDecodedSample {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  std::vector<double> values;
};

// Writes one GpuMetricSample per (sample, metric) with metric_ids[i] for
// values[i], at the sample's start converted to CLOCK_MONOTONIC
// (start + cupti_to_monotonic_ns): a PM value covers [start, end) and, like
// every gauge, holds until its metric's next sample. A sample with fewer
// values than ids, or whose converted start is not after `after_ns`
// (a sample already written), is skipped. Returns the records appended;
// `*last_ns` gets the last converted start.
size_t write_pm_samples(const std::vector<uint32_t>& metric_ids, const std::vector<PmDecodedSample>& samples,
                        int64_t cupti_to_monotonic_ns, uint64_t after_ns, uint64_t* last_ns, WriterRecordSink& sink);

}  // namespace proflaunch::cuda
