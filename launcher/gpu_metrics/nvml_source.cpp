// NVIDIA devices through NVML (nvml_library.h).
#include <cstdio>

#include "launcher/gpu_metrics/device_source.h"
#include "launcher/gpu_metrics/nvml_library.h"
#include "launcher/gpu_metrics/sampler.h"

namespace proflaunch::launcher::gpu_metrics {
namespace {

using format::GpuMetricKind;

class NvmlSource : public DeviceSource {
 public:
  ~NvmlSource() override {
    if (events_ != nullptr && nvml_.EventSetFree != nullptr) nvml_.EventSetFree(events_);
    nvml_.close();
  }
  format::GpuMetricSource source() const override { return format::GpuMetricSource::kNvml; }
  format::Vendor vendor() const override { return format::Vendor::kNvidia; }

  bool open(const char* cuda_visible_devices, std::string* why);
  std::vector<MetricSpec> metrics(size_t device) override;
  void begin_reading(size_t device) override;
  bool read(size_t device, const MetricSpec& spec, uint64_t* value, std::string* why) override;
  void poll_events(const std::function<void(size_t, uint64_t)>& emit) override;

 private:
  NvmlLibrary nvml_;
  std::vector<nvml::Device> handles_;  // per device
  nvml::EventSet events_ = nullptr;
  std::vector<std::string> xid_unsupported_;  // per device: why XIDs cannot be had
  // What one reading of a device shares between its metrics.
  nvml::Utilization utilization_{};
  nvml::Memory memory_{};
  nvml::Return utilization_result_ = nvml::kNotSupported, memory_result_ = nvml::kNotSupported;
};

bool NvmlSource::open(const char* cuda_visible_devices, std::string* why) {
  if (!nvml_.open(why)) return false;
  unsigned count = 0;
  if (nvml_.DeviceGetCount_v2(&count) != nvml::kSuccess || count == 0) {
    *why = "NVML sees no device";
    return false;
  }
  std::vector<SourceDevice> all(count);
  std::vector<nvml::Device> all_handles(count, nullptr);
  std::vector<std::string> uuids(count);
  for (unsigned i = 0; i < count; ++i) {
    SourceDevice& device = all[i];
    device.index = i;
    if (nvml_.DeviceGetHandleByIndex_v2(i, &all_handles[i]) != nvml::kSuccess) continue;
    char text[96] = {};
    if (nvml_.DeviceGetUUID != nullptr && nvml_.DeviceGetUUID(all_handles[i], text, sizeof text) == nvml::kSuccess) {
      device.uuid = text;
      parse_uuid(device.uuid, device.uuid_bytes);
    }
    text[0] = '\0';
    if (nvml_.DeviceGetName != nullptr && nvml_.DeviceGetName(all_handles[i], text, sizeof text) == nvml::kSuccess)
      device.name = text;
    nvml::Memory memory{};
    if (nvml_.DeviceGetMemoryInfo != nullptr && nvml_.DeviceGetMemoryInfo(all_handles[i], &memory) == nvml::kSuccess)
      device.total_bytes = memory.total;
    uuids[i] = device.uuid;
  }
  for (int index : visible_devices(cuda_visible_devices, uuids)) {
    if (all_handles[size_t(index)] == nullptr) continue;
    devices_.push_back(all[size_t(index)]);
    handles_.push_back(all_handles[size_t(index)]);
  }
  if (devices_.empty()) {
    *why = "CUDA_VISIBLE_DEVICES leaves no device NVML knows";
    return false;
  }
  // XID errors come as events.
  xid_unsupported_.assign(devices_.size(), "");
  if (nvml_.EventSetCreate != nullptr && nvml_.DeviceRegisterEvents != nullptr &&
      nvml_.EventSetCreate(&events_) == nvml::kSuccess) {
    for (size_t d = 0; d < devices_.size(); ++d) {
      const nvml::Return result = nvml_.DeviceRegisterEvents(handles_[d], nvml::kEventXid, events_);
      if (result != nvml::kSuccess) xid_unsupported_[d] = nvml_.error_text(result);
    }
  } else {
    xid_unsupported_.assign(devices_.size(), "NVML has no event sets");
  }
  return true;
}

std::vector<MetricSpec> NvmlSource::metrics(size_t device) {
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
      {Read::kThrottleReasons, "throttle_reasons", "bitmask", GpuMetricKind::kGauge},
      {Read::kPcieTx, "pcie_tx", "KiB/s", GpuMetricKind::kGauge},
      {Read::kPcieRx, "pcie_rx", "KiB/s", GpuMetricKind::kGauge},
      {Read::kPcieLinkGen, "pcie_link_gen", "", GpuMetricKind::kGauge},
      {Read::kPcieLinkWidth, "pcie_link_width", "", GpuMetricKind::kGauge},
      {Read::kPcieMaxLinkGen, "pcie_max_link_gen", "", GpuMetricKind::kGauge},
      {Read::kPcieMaxLinkWidth, "pcie_max_link_width", "", GpuMetricKind::kGauge},
      {Read::kEccErrors, "ecc_errors", "", GpuMetricKind::kInstant},
  };
  // NVLink per link that is up.
  for (unsigned link = 0; nvml_.DeviceGetNvLinkState != nullptr && link < nvml::kMaxNvlinks; ++link) {
    int active = 0;
    if (nvml_.DeviceGetNvLinkState(handles_[device], link, &active) != nvml::kSuccess) break;
    if (active == 0) continue;
    for (Read read : {Read::kNvlinkTx, Read::kNvlinkRx}) {
      MetricSpec spec{read, read == Read::kNvlinkTx ? "nvlink_tx" : "nvlink_rx", "KiB/s", GpuMetricKind::kGauge};
      spec.link = uint16_t(link);
      specs.push_back(spec);
    }
  }
  MetricSpec xid{Read::kXid, "xid", "", GpuMetricKind::kInstant};
  xid.polled = false;
  xid.unsupported_reason = xid_unsupported_[device];
  specs.push_back(xid);
  return specs;
}

void NvmlSource::begin_reading(size_t device) {
  utilization_result_ = nvml_.DeviceGetUtilizationRates != nullptr
                            ? nvml_.DeviceGetUtilizationRates(handles_[device], &utilization_)
                            : nvml::kNotSupported;
  memory_result_ = nvml_.DeviceGetMemoryInfo != nullptr ? nvml_.DeviceGetMemoryInfo(handles_[device], &memory_)
                                                        : nvml::kNotSupported;
}

bool NvmlSource::read(size_t device, const MetricSpec& spec, uint64_t* value, std::string* why) {
  nvml::Return result = nvml::kNotSupported;
  unsigned number = 0;
  unsigned long long wide = 0;
  // A missing entry point (an older driver) reads as not supported.
  auto call = [&](auto function, auto... args) {
    if (function == nullptr) return;
    result = function(handles_[device], args...);
  };
  switch (spec.read) {
    case Read::kGpuUtilization: result = utilization_result_; number = utilization_.gpu; break;
    case Read::kMemoryUtilization: result = utilization_result_; number = utilization_.memory; break;
    case Read::kMemoryUsed: result = memory_result_; wide = memory_.used; break;
    case Read::kMemoryTotal: result = memory_result_; wide = memory_.total; break;
    case Read::kSmClock: call(nvml_.DeviceGetClockInfo, nvml::kClockSm, &number); break;
    case Read::kMemoryClock: call(nvml_.DeviceGetClockInfo, nvml::kClockMem, &number); break;
    case Read::kPower: call(nvml_.DeviceGetPowerUsage, &number); break;
    case Read::kPowerLimit: call(nvml_.DeviceGetEnforcedPowerLimit, &number); break;
    case Read::kTemperature: call(nvml_.DeviceGetTemperature, nvml::kTemperatureGpu, &number); break;
    case Read::kThrottleReasons: call(nvml_.DeviceGetCurrentClocksThrottleReasons, &wide); break;
    case Read::kPcieTx: call(nvml_.DeviceGetPcieThroughput, nvml::kPcieTxBytes, &number); break;
    case Read::kPcieRx: call(nvml_.DeviceGetPcieThroughput, nvml::kPcieRxBytes, &number); break;
    case Read::kPcieLinkGen: call(nvml_.DeviceGetCurrPcieLinkGeneration, &number); break;
    case Read::kPcieLinkWidth: call(nvml_.DeviceGetCurrPcieLinkWidth, &number); break;
    case Read::kPcieMaxLinkGen: call(nvml_.DeviceGetMaxPcieLinkGeneration, &number); break;
    case Read::kPcieMaxLinkWidth: call(nvml_.DeviceGetMaxPcieLinkWidth, &number); break;
    case Read::kEccErrors:
      call(nvml_.DeviceGetTotalEccErrors, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &wide);
      break;
    case Read::kNvlinkTx:
    case Read::kNvlinkRx: {
      nvml::FieldValue field{};
      field.fieldId = spec.read == Read::kNvlinkTx ? nvml::kFieldNvlinkDataTx : nvml::kFieldNvlinkDataRx;
      field.scopeId = spec.link;
      call(nvml_.DeviceGetFieldValues, 1, &field);
      if (result == nvml::kSuccess) result = field.nvmlReturn;
      wide = field.value.ullVal;  // KiB so far
      break;
    }
    case Read::kThrottleStatus:
    case Read::kXid:
      break;
  }
  if (result != nvml::kSuccess) {
    *why = nvml_.error_text(result);
    return false;
  }
  *value = wide != 0 ? uint64_t(wide) : uint64_t(number);
  return true;
}

void NvmlSource::poll_events(const std::function<void(size_t, uint64_t)>& emit) {
  if (events_ == nullptr || nvml_.EventSetWait_v2 == nullptr) return;
  nvml::EventData data{};
  // Without waiting; a bounded number per reading.
  for (int i = 0; i < 64 && nvml_.EventSetWait_v2(events_, &data, 0) == nvml::kSuccess; ++i)
    for (size_t d = 0; d < handles_.size(); ++d)
      if (handles_[d] == data.device && (data.eventType & nvml::kEventXid) != 0) emit(d, data.eventData);
}

}  // namespace

std::unique_ptr<DeviceSource> open_nvml_source(const char* cuda_visible_devices, std::string* why) {
  auto source = std::make_unique<NvmlSource>();
  if (!source->open(cuda_visible_devices, why)) return nullptr;
  return source;
}

// "GPU-53494d47-5055-..." -> its 16 bytes (false if it is not that form).
bool parse_uuid(const std::string& text, uint8_t out[16]) {
  std::string hex;
  for (size_t i = text.rfind("GPU-", 0) == 0 ? 4 : 0; i < text.size(); ++i)
    if (text[i] != '-') hex += text[i];
  if (hex.size() != 32) return false;
  for (int i = 0; i < 16; ++i) {
    unsigned byte = 0;
    if (std::sscanf(hex.c_str() + 2 * i, "%2x", &byte) != 1) return false;
    out[i] = uint8_t(byte);
  }
  return true;
}

}  // namespace proflaunch::launcher::gpu_metrics
