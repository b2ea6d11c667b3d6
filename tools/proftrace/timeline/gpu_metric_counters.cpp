#include "tools/proftrace/timeline/gpu_metric_counters.h"

#include <string>

namespace proflaunch::tools::timeline {

std::string gpu_metric_label(std::string_view name, uint16_t link) {
  static const std::pair<std::string_view, std::string_view> kLabels[] = {
      {"gpu_utilization", "GPU utilization"},   {"memory_utilization", "Memory utilization"},
      {"memory_used", "Memory used"},           {"memory_total", "Memory total"},
      {"sm_clock", "SM clock"},                 {"memory_clock", "Memory clock"},
      {"power", "Power"},                       {"power_limit", "Power limit"},
      {"temperature", "Temperature"},           {"throttle_reasons", "Throttle reasons"},
      {"pcie_tx", "PCIe tx"},                   {"pcie_rx", "PCIe rx"},
      {"pcie_link_gen", "PCIe link gen"},       {"pcie_link_width", "PCIe link width"},
      {"pcie_max_link_gen", "PCIe max link gen"}, {"pcie_max_link_width", "PCIe max link width"},
      {"nvlink_tx", "NVLink tx"},               {"nvlink_rx", "NVLink rx"},
      {"xid", "XID error"},                     {"ecc_errors", "ECC errors"},
      // CUPTI PM sampling's DEFAULT set, from the program itself
      {"gr_active", "GR engine active"},        {"sm_active", "SM active"},
      {"sm_occupancy", "SM occupancy"},         {"tensor_active", "Tensor pipe active"},
      {"dram_read", "DRAM read"},               {"dram_write", "DRAM write"},
      {"pcie_read", "PCIe read (counters)"},    {"pcie_write", "PCIe write (counters)"},
      {"nvlink_read", "NVLink read (counters)"}, {"nvlink_write", "NVLink write (counters)"},
  };
  std::string label(name);
  for (const auto& [metric, text] : kLabels)
    if (metric == name) label = text;
  if (link != 0xFFFF) label += " link " + std::to_string(link);
  return label;
}

void GpuMetricCounters::on_gpu_metric_sample(const interpret::Event<format::GpuMetricSampleRecord>& sample) {
  const SectionModel* model = sample.section->model;
  if (model == nullptr) return;
  auto def = model->gpu_metrics.find(sample.record.metric);
  if (def == model->gpu_metrics.end()) return;
  SectionContext& section = layout_.section(sample.section->id);
  const uint32_t pid = layout_.gpu_process_pid(section, def->second.device);
  const std::string_view unit = model->string(def->second.unit_string);
  const Str name = layout_.strings().intern(gpu_metric_label(model->string(def->second.name_string), def->second.link));
  // Bytes keep the memory counters' unit; others name theirs.
  const char* unit_name = unit == "bytes" ? nullptr : unit.empty() ? "" : unit.data();
  const char* key = unit.empty() ? "value" : unit.data();
  // StringDefs are not NUL-terminated in the record but the model keeps
  // them as std::string, so data() is.
  const int64_t at = layout_.timeline_ns(section, sample.record.time_ns);
  CounterSample::Value value{key, sample.record.value};
  layout_.sink().counter(CounterSample{pid, at, name, &value, 1, unit_name});
  ++counter_events_;
  if (def->second.kind == uint8_t(format::GpuMetricKind::kInstant)) {
    CounterSample::Value zero{key, 0};
    layout_.sink().counter(CounterSample{pid, at + 1'000'000, name, &zero, 1, unit_name});
    ++counter_events_;
  }
}

}  // namespace proflaunch::tools::timeline
