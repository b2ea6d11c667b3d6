// gpu-metrics: per device the launcher sampled (NVML, ROCm SMI) and per
// device a traced process sampled itself (CUPTI PM sampling), each metric's mean,
// median, 99th percentile and maximum over time, how long the clocks were
// held down and why, the metrics the device does not have, and XID / ECC
// errors. Values hold until the next sample (gpu_metric_series.h).
#include <cstdio>
#include <memory>

#include "tools/proftrace/stats/analysed_span.h"
#include "tools/proftrace/stats/gpu_metric_series.h"
#include "tools/proftrace/stats/gpu_metric_timeline.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

std::string seconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f s", double(ns) / 1e9);
  return text;
}

std::string decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

class GpuMetricsSummary final : public StatsSection {
 public:
  explicit GpuMetricsSummary(const StatsOptions& options) : timeline_bins_(options.timeline_bins) {}
  std::string name() const override { return "gpu-metrics"; }
  std::vector<interpret::Consumer*> parts() override {
    if (timeline_bins_ == 0) return {&series_};
    return {&series_, &span_, &timeline_};
  }

  // With timeline bins (the report): also each charted metric over time.
  std::vector<Table> finish_tables(const TraceModel& model) override {
    std::vector<Table> tables;
    tables.push_back(finish(model));
    if (timeline_bins_ > 0)
      tables.push_back(timeline_.table(model, series_.finish(model), span_.first_ns(), span_.last_ns(), timeline_bins_));
    return tables;
  }

  Table finish(const TraceModel& model) override {
    Table table;
    table.title = "Device metrics: per device, over the time sampled (NVML or ROCm SMI through the launcher; CUPTI PM "
                  "sampling in the program with --gpu-metrics-counters)";
    table.columns = {"Device", "Metric", "Unit", "Mean", "P50", "P99", "Max", "Samples"};
    const std::vector<DeviceMetrics> devices = series_.finish(model);
    for (const DeviceMetrics& device : devices) {
      for (const MetricSummary& metric : device.metrics) {
        if (metric.instant) continue;
        std::string name = metric.name;
        if (metric.link != 0xFFFF) name += " link " + std::to_string(metric.link);
        if (metric.unit == "bitmask") {  // no mean of bits: the notes below say what they meant
          table.rows.push_back({device.label, name, metric.unit, "-", "-", "-", "-", std::to_string(metric.samples)});
          continue;
        }
        table.rows.push_back({device.label, name, metric.unit, decimal(metric.mean), std::to_string(metric.p50),
                              std::to_string(metric.p99), std::to_string(metric.max),
                              std::to_string(metric.samples)});
      }
      if (device.sampled_ns > 0) {
        std::string line = device.label + ": clocks held down " +
                           format_percent(double(device.throttled_ns) / double(device.sampled_ns)) + "% of the " +
                           seconds(device.sampled_ns) + " sampled";
        if (device.throttled_ns > 0) {
          line += " (";
          bool first = true;
          for (const auto& [reason, ns] : device.throttled_by) {
            line += (first ? "" : ", ") + reason + " " + seconds(ns);
            first = false;
          }
          line += ")";
        }
        table.notes.push_back(line);
      }
      for (const MetricSummary& metric : device.metrics)
        for (const auto& [at, value] : metric.instants)
          table.notes.push_back(device.label + ": " + (metric.name == "xid" ? "XID " : "ECC errors: ") +
                                std::to_string(value) + " at " + std::to_string(at) + " ns (CLOCK_MONOTONIC)");
      for (const auto& [metric, reason] : device.unsupported)
        table.notes.push_back(device.label + ": " + metric + " left out: " + reason);
    }
    if (devices.empty())
      table.notes.push_back("no device metrics in this trace (recorded by proflaunch --gpu-metrics where NVML "
                            "loads; see launcher/gpu_metrics/README.md)");
    return table;
  }

 private:
  size_t timeline_bins_;
  GpuMetricSeries series_;
  AnalysedSpan span_;
  GpuMetricTimeline timeline_;
};

}  // namespace

std::unique_ptr<StatsSection> make_gpu_metrics_summary(const StatsOptions& options) {
  return std::make_unique<GpuMetricsSummary>(options);
}

}  // namespace proflaunch::tools::stats
