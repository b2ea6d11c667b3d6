#include "tools/proftrace/stats/gpu_metric_timeline.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

namespace proflaunch::tools::stats {
namespace {

bool charted(std::string_view name) {
  for (const char* c : kChartedGpuMetrics)
    if (name == c) return true;
  return false;
}

// NVML's rates (utilization, throughput) read at t are what happened since
// the previous reading (launcher/gpu_metrics/README.md): they cover the time
// before their sample. Other gauges, ROCm SMI's busy percentages (a reading
// of the moment) and CUPTI PM samples (written at the start of the interval
// they cover) hold from their sample on.
bool is_rate(const format::GpuMetricDefRecord& def, std::string_view name) {
  return def.source == uint8_t(format::GpuMetricSource::kNvml) &&
         (name == "gpu_utilization" || name == "memory_utilization" || name == "pcie_tx" || name == "pcie_rx");
}

// Neighbours merged pairwise: half the segments, each twice as long.
void halve(std::vector<GpuMetricTimeline::Segment>& segments) {
  size_t out = 0;
  for (size_t i = 0; i < segments.size(); i += 2) {
    GpuMetricTimeline::Segment merged = segments[i];
    if (i + 1 < segments.size()) {
      merged.end_ns = segments[i + 1].end_ns;
      merged.weighted += segments[i + 1].weighted;
    }
    segments[out++] = merged;
  }
  segments.resize(out);
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

}  // namespace

void GpuMetricTimeline::on_gpu_metric_sample(const interpret::Event<format::GpuMetricSampleRecord>& sample) {
  const SectionModel* model = sample.section->model;
  if (model == nullptr) return;
  auto def = model->gpu_metrics.find(sample.record.metric);
  if (def == model->gpu_metrics.end() || def->second.kind != uint8_t(format::GpuMetricKind::kGauge) ||
      def->second.link != 0xFFFF || !charted(model->string(def->second.name_string)))
    return;
  Series& series = series_[{sample.section->id, sample.record.metric}];
  const uint64_t at = sample.record.time_ns;
  if (series.open && at > series.last_ns) {
    const uint64_t value =
        is_rate(def->second, model->string(def->second.name_string)) ? sample.record.value : series.last_value;
    series.segments.push_back({series.last_ns, at, double(value) * double(at - series.last_ns)});
    if (series.segments.size() >= kMaxSegments) halve(series.segments);
  }
  if (!series.open || at >= series.last_ns) {
    series.last_ns = at;
    series.last_value = sample.record.value;
  }
  series.open = true;
}

bool GpuMetricTimeline::mean_over(const std::vector<Segment>& segments, uint64_t begin, uint64_t end, double* mean) {
  // The first segment that ends after `begin` (segments are in time order).
  auto it = std::lower_bound(segments.begin(), segments.end(), begin,
                             [](const Segment& s, uint64_t t) { return s.end_ns <= t; });
  double weighted = 0;
  uint64_t covered = 0;
  for (; it != segments.end() && it->begin_ns < end; ++it) {
    const uint64_t from = std::max(begin, it->begin_ns), to = std::min(end, it->end_ns);
    if (to <= from) continue;
    const double share = double(to - from) / double(it->end_ns - it->begin_ns);
    weighted += it->weighted * share;
    covered += to - from;
  }
  if (covered == 0) return false;
  *mean = weighted / double(covered);
  return true;
}

Table GpuMetricTimeline::table(const TraceModel& model, const std::vector<DeviceMetrics>& devices, uint64_t first_ns,
                               uint64_t last_ns, size_t bins) const {
  Table table;
  table.title = "Device metrics over time";
  table.columns = {"Device", "Metric", "Unit", "Start (ns)", "End (ns)", "Mean"};
  if (bins == 0 || last_ns <= first_ns) return table;
  const uint64_t span = last_ns - first_ns;
  bins = size_t(std::min<uint64_t>(bins, span));
  const auto edge = [&](uint64_t k) { return first_ns + uint64_t((unsigned __int128)span * k / bins); };
  for (const DeviceMetrics& device : devices) {
    const SectionModel* section = model.find(device.section);
    if (section == nullptr) continue;
    for (const char* wanted : kChartedGpuMetrics) {
      for (const auto& [metric_id, def] : section->gpu_metrics) {
        if (def.device != device.device || def.link != 0xFFFF || section->string(def.name_string) != wanted)
          continue;
        auto found = series_.find({device.section, metric_id});
        if (found == series_.end()) continue;
        const std::string unit(section->string(def.unit_string));
        for (size_t i = 0; i < bins; ++i) {
          double mean = 0;
          if (!mean_over(found->second.segments, edge(i), edge(i + 1), &mean)) continue;
          table.rows.push_back({device.label, wanted, unit, format_ns(edge(i) - first_ns),
                                format_ns(edge(i + 1) - first_ns), number(mean)});
        }
      }
    }
  }
  table.notes.push_back("each charted metric's time-weighted mean in the overview's activity bins, from the first "
                        "event of the trace: an NVML utilization or throughput covers the time since the reading "
                        "before it, other values (ROCm SMI's busy percentages too) hold until the next reading");
  return table;
}

}  // namespace proflaunch::tools::stats
