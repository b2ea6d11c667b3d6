// device-state: what the device itself did to the run, from the launcher's
// NVML samples (gpu_metric_series.h): clocks held down (power, thermal,
// hardware slowdown), memory nearly full (other processes included), a PCIe
// link that never trained to what the device and slot can do.
#include <cstdio>

#include "tools/proftrace/stats/gpu_metric_series.h"
#include "tools/proftrace/stats/recommendation_finding.h"

namespace proflaunch::tools::stats {
namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", fraction * 100);
  return text;
}

std::string seconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", double(ns) / 1e9);
  return text;
}

}  // namespace

Finding device_state(const std::vector<DeviceMetrics>& devices) {
  Finding finding;
  if (devices.empty()) {
    finding.text = "no device metrics in the trace (proflaunch samples them where NVML loads)";
    return finding;
  }
  std::string text;
  auto add = [&](const std::string& line) { text += (text.empty() ? "" : "; ") + line; };
  for (const DeviceMetrics& device : devices) {
    if (device.sampled_ns > 0 && double(device.throttled_ns) >= kThrottledShare * double(device.sampled_ns)) {
      std::string why;
      for (const auto& [reason, ns] : device.throttled_by) why += (why.empty() ? "" : ", ") + reason;
      add(device.label + " was throttled " + percent(double(device.throttled_ns) / double(device.sampled_ns)) +
          " of the " + seconds(device.sampled_ns) + " sampled (" + why +
          "): its clocks were held down; check cooling, the power limit (nvidia-smi -q -d POWER,PERFORMANCE) "
          "and other jobs on the node");
      ++finding.totals.count;
    }
    const MetricSummary* used = device.find("memory_used");
    const MetricSummary* total = device.find("memory_total");
    if (used != nullptr && total != nullptr && total->max > 0 &&
        double(used->max) >= kMemoryNearFullShare * double(total->max)) {
      add(device.label + " memory reached " + percent(double(used->max) / double(total->max)) +
          " of the device (all processes on it): allocations may fail or the caching allocator may thrash; "
          "see proftrace memory and other processes on the device");
      ++finding.totals.count;
    }
    const MetricSummary* gen = device.find("pcie_link_gen");
    const MetricSummary* max_gen = device.find("pcie_max_link_gen");
    const MetricSummary* width = device.find("pcie_link_width");
    const MetricSummary* max_width = device.find("pcie_max_link_width");
    const bool slow_gen = gen != nullptr && max_gen != nullptr && gen->max < max_gen->max;
    const bool narrow = width != nullptr && max_width != nullptr && width->max < max_width->max;
    if (slow_gen || narrow) {
      add(device.label + " PCIe link never went above gen " + std::to_string(gen ? gen->max : 0) + " x" +
          std::to_string(width ? width->max : 0) + " (the device can do gen " +
          std::to_string(max_gen ? max_gen->max : 0) + " x" + std::to_string(max_width ? max_width->max : 0) +
          "): host-device copies are slower; check the slot, riser and BIOS link settings");
      ++finding.totals.count;
    }
  }
  finding.found = !text.empty();
  finding.text = finding.found ? text
                               : std::to_string(devices.size()) +
                                     " device(s) sampled: not throttled, memory below 95%, PCIe links at capability";
  return finding;
}

}  // namespace proflaunch::tools::stats
