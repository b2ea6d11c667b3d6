#include "tools/proftrace/stats/gpu_metric_series.h"

#include <algorithm>
#include <cstdio>

namespace proflaunch::tools::stats {

const MetricSummary* DeviceMetrics::find(std::string_view name) const {
  for (const MetricSummary& metric : metrics)
    if (metric.name == name && metric.link == 0xFFFF) return &metric;
  return nullptr;
}

void GpuMetricSeries::on_gpu_metric_sample(const interpret::Event<format::GpuMetricSampleRecord>& sample) {
  const SectionModel* model = sample.section->model;
  if (model == nullptr) return;
  auto def = model->gpu_metrics.find(sample.record.metric);
  if (def == model->gpu_metrics.end()) return;
  Series& series = series_[{sample.section->id, sample.record.metric}];
  const uint64_t at = sample.record.time_ns;
  const uint64_t value = sample.record.value;
  ++series.samples;
  if (def->second.kind == uint8_t(format::GpuMetricKind::kInstant)) {
    series.instants.emplace_back(at, value);
    series.max = std::max(series.max, value);
    return;
  }
  const std::string_view name = model->string(def->second.name_string);
  if (series.open && at > series.last_ns) {
    const uint64_t held = at - series.last_ns;
    series.weight_ns[series.last_value] += held;
    if (name == "throttle_reasons") {  // NVML: the bits that hold the clocks down
      bool any = false;
      for (const ThrottleReason& reason : kThrottleReasons) {
        if ((series.last_value & reason.bit) == 0) continue;
        series.throttled_by[reason.name] += held;
        any = true;
      }
      if (any) series.throttled_ns += held;
    } else if (name == "throttle_status" && series.last_value != 0) {  // ROCm SMI: any bit
      series.throttled_by[kAmdThrottleReason] += held;
      series.throttled_ns += held;
    }
  }
  if (!series.open) series.first_ns = at;
  series.open = true;
  series.last_ns = std::max(series.last_ns, at);
  series.last_value = value;
  series.max = std::max(series.max, value);
  series.min = std::min(series.min, value);
}

namespace {

std::string hex_uuid(const uint8_t (&uuid)[16]) {
  std::string text;
  bool any = false;
  for (uint8_t b : uuid) {
    char digits[3];
    std::snprintf(digits, sizeof digits, "%02x", b);
    text += digits;
    any = any || b != 0;
  }
  return any ? text : std::string();
}

// The value below which `fraction` of the time lies.
uint64_t quantile(const std::map<uint64_t, uint64_t>& weight_ns, uint64_t total_ns, double fraction) {
  if (total_ns == 0) return 0;
  const double target = fraction * double(total_ns);
  uint64_t below = 0;
  for (const auto& [value, ns] : weight_ns) {
    below += ns;
    if (double(below) >= target) return value;
  }
  return weight_ns.rbegin()->first;
}

// A device of `section` as a reader knows it: a traced process's own device
// by that process's number; a sampler's device by the number the first
// traced process that used it (same UUID) gave it, else by the sampling
// library's index.
std::string device_metrics_label(const TraceModel& model, const SectionModel& section, int32_t ordinal,
                                 const format::DeviceInfoRecord& info) {
  if (!section.device_sampler())
    return "GPU " + std::to_string(ordinal) + " (pid " + std::to_string(section.pid()) + ")";
  const std::string uuid = hex_uuid(info.uuid);
  for (const SectionModel* traced : model.ordered()) {
    if (traced->device_sampler() || uuid.empty()) continue;
    for (const auto& [seen, seen_info] : traced->devices)
      if (hex_uuid(seen_info.uuid) == uuid)
        return "GPU " + std::to_string(seen) + " (pid " + std::to_string(traced->pid()) + ")";
  }
  return (info.vendor == uint8_t(format::Vendor::kAmd) ? "ROCm SMI device " : "NVML device ") +
         std::to_string(ordinal);
}

}  // namespace

std::vector<DeviceMetrics> GpuMetricSeries::finish(const TraceModel& model) const {
  std::vector<DeviceMetrics> devices;
  // The launcher's sampler first (NVML, ROCm SMI), then the metrics traced
  // processes sampled themselves (CUPTI PM sampling), each on its device.
  std::vector<const SectionModel*> sections;
  for (const auto& [id, section] : model.sections())
    if (section.device_sampler()) sections.push_back(&section);
  for (const SectionModel* traced : model.ordered())
    if (!traced->device_sampler() && !traced->gpu_metrics.empty()) sections.push_back(traced);
  for (const SectionModel* owner : sections) {
    const SectionModel& section = *owner;
    const uint64_t id = section.section_id;
    for (const auto& [ordinal, info] : section.devices) {
      DeviceMetrics device;
      device.section = id;
      device.device = ordinal;
      device.uuid = hex_uuid(info.uuid);
      device.label = device_metrics_label(model, section, ordinal, info);
      for (const auto& [metric_id, def] : section.gpu_metrics) {
        if (def.device != ordinal) continue;
        const std::string name(section.string(def.name_string));
        if (def.unsupported_reason_string != 0) {
          device.unsupported.emplace_back(name, std::string(section.string(def.unsupported_reason_string)));
          continue;
        }
        auto found = series_.find({id, metric_id});
        if (found == series_.end()) continue;
        const Series& series = found->second;
        MetricSummary summary;
        summary.name = name;
        summary.unit = std::string(section.string(def.unit_string));
        summary.link = def.link;
        summary.instant = def.kind == uint8_t(format::GpuMetricKind::kInstant);
        summary.samples = series.samples;
        summary.max = series.max;
        summary.instants = series.instants;
        if (!summary.instant) {
          uint64_t total = 0;
          double weighted = 0;
          for (const auto& [value, ns] : series.weight_ns) {
            total += ns;
            weighted += double(value) * double(ns);
          }
          summary.covered_ns = total;
          summary.mean = total > 0 ? weighted / double(total) : double(series.last_value);
          summary.p50 = total > 0 ? quantile(series.weight_ns, total, 0.5) : series.last_value;
          summary.p99 = total > 0 ? quantile(series.weight_ns, total, 0.99) : series.last_value;
          summary.min = series.min == UINT64_MAX ? 0 : series.min;
          summary.last = series.last_value;
          if (name == "throttle_reasons" || name == "throttle_status") {
            device.throttled_ns = series.throttled_ns;
            device.sampled_ns = series.last_ns - series.first_ns;
            device.throttled_by = series.throttled_by;
          }
        }
        device.metrics.push_back(std::move(summary));
      }
      if (section.device_sampler() || !device.metrics.empty() || !device.unsupported.empty())
        devices.push_back(std::move(device));
    }
  }
  return devices;
}

}  // namespace proflaunch::tools::stats
