#include "preload/cuda/cupti/pm_sampling_records.h"

#include <cctype>
#include <cmath>

#include "formats/records.h"

namespace proflaunch::cuda {

std::vector<PmMetric> default_pm_metrics() {
  // Names as DCGM's profiling module uses them on Turing and later (the
  // "_realtime" counters are the ones PM sampling can read); bytes per
  // second as Nsight Compute names them.
  return {
      {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", "gr_active", "%"},
      {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", "sm_active", "%"},
      {"sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", "sm_occupancy", "%"},
      {"sm__pipe_shared_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", "tensor_active", "%"},
      {"dram__bytes_read.sum.per_second", "dram_read", "B/s"},
      {"dram__bytes_write.sum.per_second", "dram_write", "B/s"},
      {"pcie__read_bytes.sum.per_second", "pcie_read", "B/s"},
      {"pcie__write_bytes.sum.per_second", "pcie_write", "B/s"},
      {"nvlrx__bytes.sum.per_second", "nvlink_read", "B/s"},
      {"nvltx__bytes.sum.per_second", "nvlink_write", "B/s"},
  };
}

bool pm_metrics_are_default(std::string_view setting) {
  if (setting.size() != 7) return false;
  for (size_t i = 0; i < 7; ++i)
    if (std::toupper(static_cast<unsigned char>(setting[i])) != "DEFAULT"[i]) return false;
  return true;
}

namespace {

std::string unit_from_name(std::string_view name) {
  if (name.find("pct") != std::string_view::npos) return "%";
  if (name.find("bytes") != std::string_view::npos && name.find("per_second") != std::string_view::npos) return "B/s";
  return "";
}

}  // namespace

std::vector<PmMetric> choose_pm_metrics(std::string_view setting) {
  if (pm_metrics_are_default(setting)) return default_pm_metrics();
  std::vector<PmMetric> metrics;
  size_t at = 0;
  while (at < setting.size()) {
    size_t comma = setting.find(',', at);
    if (comma == std::string_view::npos) comma = setting.size();
    const std::string_view name = setting.substr(at, comma - at);
    if (!name.empty()) metrics.push_back(PmMetric{std::string(name), std::string(name), unit_from_name(name)});
    at = comma + 1;
  }
  return metrics;
}

uint64_t pm_record_value(double value) {
  if (!(value > 0)) return 0;  // negative, zero, NaN
  if (value >= 1.8e19) return UINT64_MAX;
  return static_cast<uint64_t>(std::llround(value));
}

size_t write_pm_samples(const std::vector<uint32_t>& metric_ids, const std::vector<PmDecodedSample>& samples,
                        int64_t cupti_to_monotonic_ns, uint64_t after_ns, uint64_t* last_ns, WriterRecordSink& sink) {
  size_t written = 0;
  for (const PmDecodedSample& sample : samples) {
    if (sample.values.size() < metric_ids.size()) continue;
    const int64_t at = int64_t(sample.start_ns) + cupti_to_monotonic_ns;
    if (at <= 0 || uint64_t(at) <= after_ns) continue;
    for (size_t i = 0; i < metric_ids.size(); ++i) {
      format::GpuMetricSampleRecord record{};
      record.header = format::header_for<format::GpuMetricSampleRecord>();
      record.metric = metric_ids[i];
      record.time_ns = uint64_t(at);
      record.value = pm_record_value(sample.values[i]);
      if (sink.append(&record, sizeof record)) ++written;
    }
    after_ns = uint64_t(at);
    if (last_ns != nullptr) *last_ns = after_ns;
  }
  return written;
}

}  // namespace proflaunch::cuda
