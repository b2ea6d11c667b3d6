// AMD devices through ROCm SMI (rocm_smi_library.h). Units as NVML's where
// the meaning is the same: ROCm SMI's microwatts become mW, millidegrees C,
// Hz MHz.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "launcher/gpu_metrics/device_source.h"
#include "launcher/gpu_metrics/rocm_smi_library.h"
#include "launcher/gpu_metrics/sampler.h"

namespace proflaunch::launcher::gpu_metrics {
namespace {

using format::GpuMetricKind;

// PCIe transfer rate (T/s) -> generation: 2.5 GT/s is gen 1, each later one doubles (gen 3: 8).
unsigned pcie_generation(uint64_t transfers_per_second) {
  const double gt = double(transfers_per_second) / 1e9;
  if (gt <= 0) return 0;
  if (gt < 4) return 1;
  if (gt < 7) return 2;
  if (gt < 12) return 3;
  if (gt < 24) return 4;
  if (gt < 48) return 5;
  return 6;
}

class RocmSmiSource : public DeviceSource {
 public:
  ~RocmSmiSource() override { smi_.close(); }
  format::GpuMetricSource source() const override { return format::GpuMetricSource::kRocmSmi; }
  format::Vendor vendor() const override { return format::Vendor::kAmd; }

  bool open(const AmdVisibility& visibility, std::string* why);
  std::vector<MetricSpec> metrics(size_t device) override;
  bool read(size_t device, const MetricSpec& spec, uint64_t* value, std::string* why) override;

 private:
  RocmSmiLibrary smi_;
};

bool RocmSmiSource::open(const AmdVisibility& visibility, std::string* why) {
  if (!smi_.open(why)) return false;
  uint32_t count = 0;
  if (smi_.num_monitor_devices(&count) != rsmi::kSuccess || count == 0) {
    *why = "ROCm SMI sees no device";
    return false;
  }
  std::vector<SourceDevice> all(count);
  std::vector<std::string> uuids(count);
  for (uint32_t i = 0; i < count; ++i) {
    SourceDevice& device = all[i];
    device.index = i;
    uint64_t unique_id = 0;
    // ROCr's agent UUID is "GPU-" and the unique id's 16 hex digits, and
    // HIP's hipDeviceGetUuid gives those 16 digits as its 16 bytes: the
    // program's DeviceInfo carries that text.
    if (smi_.dev_unique_id_get != nullptr && smi_.dev_unique_id_get(i, &unique_id) == rsmi::kSuccess) {
      char text[32];
      std::snprintf(text, sizeof text, "GPU-%016" PRIx64, unique_id);
      device.uuid = text;
      std::memcpy(device.uuid_bytes, text + 4, 16);
    }
    char name[128] = {};
    if (smi_.dev_name_get != nullptr && smi_.dev_name_get(i, name, sizeof name) == rsmi::kSuccess) device.name = name;
    uint64_t total = 0;
    if (smi_.dev_memory_total_get != nullptr && smi_.dev_memory_total_get(i, rsmi::kMemTypeVram, &total) == rsmi::kSuccess)
      device.total_bytes = total;
    uuids[i] = device.uuid;
  }
  for (int index : amd_visible_devices(visibility, uuids)) devices_.push_back(all[size_t(index)]);
  if (devices_.empty()) {
    *why = "ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES leave no device ROCm SMI knows";
    return false;
  }
  return true;
}

std::vector<MetricSpec> RocmSmiSource::metrics(size_t) {
  std::vector<MetricSpec> specs = {
      {Read::kGpuUtilization, "gpu_utilization", "%", GpuMetricKind::kGauge},
      {Read::kMemoryUtilization, "memory_utilization", "%", GpuMetricKind::kGauge},
      {Read::kMemoryUsed, "memory_used", "bytes", GpuMetricKind::kGauge},
      {Read::kMemoryTotal, "memory_total", "bytes", GpuMetricKind::kGauge},
      {Read::kSmClock, "sm_clock", "MHz", GpuMetricKind::kGauge},
      {Read::kMemoryClock, "memory_clock", "MHz", GpuMetricKind::kGauge},
      {Read::kPower, "power", "mW", GpuMetricKind::kGauge},
      {Read::kPowerLimit, "power_limit", "mW", GpuMetricKind::kGauge},
      {Read::kTemperature, "temperature", "C", GpuMetricKind::kGauge},
      // The firmware's throttle bits: not NVML's clock event reasons, so
      // not named as they are.
      {Read::kThrottleStatus, "throttle_status", "bitmask", GpuMetricKind::kGauge},
      {Read::kPcieTx, "pcie_tx", "KiB/s", GpuMetricKind::kGauge},
      {Read::kPcieRx, "pcie_rx", "KiB/s", GpuMetricKind::kGauge},
      {Read::kPcieLinkGen, "pcie_link_gen", "", GpuMetricKind::kGauge},
      {Read::kPcieLinkWidth, "pcie_link_width", "", GpuMetricKind::kGauge},
      {Read::kPcieMaxLinkGen, "pcie_max_link_gen", "", GpuMetricKind::kGauge},
      {Read::kPcieMaxLinkWidth, "pcie_max_link_width", "", GpuMetricKind::kGauge},
      {Read::kEccErrors, "ecc_errors", "", GpuMetricKind::kInstant},
  };
  // rsmi_dev_pci_throughput_get returns after a second (the amdgpu driver
  // counts PCIe packets for one second in the read of its pcie_bw file):
  // read between the others it would hold back every metric of every device.
  for (MetricSpec& spec : specs)
    if (spec.read == Read::kPcieTx || spec.read == Read::kPcieRx)
      spec.unsupported_reason = "not sampled: rsmi_dev_pci_throughput_get takes a second per call";
  return specs;
}

bool RocmSmiSource::read(size_t device, const MetricSpec& spec, uint64_t* value, std::string* why) {
  const uint32_t index = devices_[device].index;
  rsmi::Status result = rsmi::kNotSupported;
  uint32_t number = 0;
  uint64_t wide = 0;
  int64_t temperature = 0;
  rsmi::Frequencies frequencies{};
  rsmi::PcieBandwidth bandwidth{};
  rsmi::ErrorCount errors{};
  rsmi::GpuMetrics metrics{};
  // A missing entry point (an older library) reads as not supported.
  auto call = [&](auto function, auto... args) {
    if (function == nullptr) return;
    result = function(index, args...);
  };
  switch (spec.read) {
    case Read::kGpuUtilization: call(smi_.dev_busy_percent_get, &number); wide = number; break;
    case Read::kMemoryUtilization: call(smi_.dev_memory_busy_percent_get, &number); wide = number; break;
    case Read::kMemoryUsed: call(smi_.dev_memory_usage_get, rsmi::kMemTypeVram, &wide); break;
    case Read::kMemoryTotal: call(smi_.dev_memory_total_get, rsmi::kMemTypeVram, &wide); break;
    case Read::kSmClock:
    case Read::kMemoryClock:
      call(smi_.dev_gpu_clk_freq_get, spec.read == Read::kSmClock ? rsmi::kClkTypeSys : rsmi::kClkTypeMem,
           &frequencies);
      if (result == rsmi::kSuccess && frequencies.current >= frequencies.num_supported) result = rsmi::kNotSupported;
      if (result == rsmi::kSuccess) wide = frequencies.frequency[frequencies.current] / 1'000'000;
      break;
    case Read::kPower: call(smi_.dev_power_ave_get, 0u, &wide); wide /= 1000; break;
    case Read::kPowerLimit: call(smi_.dev_power_cap_get, 0u, &wide); wide /= 1000; break;
    case Read::kTemperature:
      call(smi_.dev_temp_metric_get, rsmi::kTempTypeEdge, rsmi::kTempCurrent, &temperature);
      wide = temperature > 0 ? uint64_t(temperature) / 1000 : 0;
      break;
    case Read::kThrottleStatus:
      call(smi_.dev_gpu_metrics_info_get, &metrics);
      wide = metrics.throttle_status;
      break;
    case Read::kPcieLinkGen:
    case Read::kPcieLinkWidth:
    case Read::kPcieMaxLinkGen:
    case Read::kPcieMaxLinkWidth: {
      call(smi_.dev_pci_bandwidth_get, &bandwidth);
      const rsmi::Frequencies& rates = bandwidth.transfer_rate;
      const uint32_t levels = rates.num_supported < rsmi::kMaxNumFrequencies ? rates.num_supported
                                                                             : rsmi::kMaxNumFrequencies;
      if (result == rsmi::kSuccess && (levels == 0 || rates.current >= levels)) result = rsmi::kNotSupported;
      if (result != rsmi::kSuccess) break;
      if (spec.read == Read::kPcieLinkGen) wide = pcie_generation(rates.frequency[rates.current]);
      if (spec.read == Read::kPcieLinkWidth) wide = bandwidth.lanes[rates.current];
      for (uint32_t level = 0; level < levels; ++level) {
        if (spec.read == Read::kPcieMaxLinkGen) wide = std::max<uint64_t>(wide, pcie_generation(rates.frequency[level]));
        if (spec.read == Read::kPcieMaxLinkWidth) wide = std::max<uint64_t>(wide, bandwidth.lanes[level]);
      }
      break;
    }
    case Read::kEccErrors:
      call(smi_.dev_ecc_count_get, rsmi::kGpuBlockUmc, &errors);
      wide = errors.uncorrectable_err;
      break;
    default:
      break;
  }
  if (result != rsmi::kSuccess) {
    *why = smi_.error_text(result);
    return false;
  }
  *value = wide;
  return true;
}

}  // namespace

std::unique_ptr<DeviceSource> open_rocm_smi_source(const AmdVisibility& visibility, std::string* why) {
  auto source = std::make_unique<RocmSmiSource>();
  if (!source->open(visibility, why)) return nullptr;
  return source;
}

}  // namespace proflaunch::launcher::gpu_metrics
