// One vendor's management library as the sampler reads it (sampler.cpp):
// NVML for NVIDIA devices, ROCm SMI for AMD ones. Each opens its library,
// says which of its devices the program can see and what each metric of a
// device reads; the sampler's loop, the definitions and the part are shared.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formats/records.h"

namespace proflaunch::launcher::gpu_metrics {

// What one metric is read from.
enum class Read {
  kGpuUtilization, kMemoryUtilization, kMemoryUsed, kMemoryTotal, kSmClock, kMemoryClock, kPower, kPowerLimit,
  kTemperature, kThrottleReasons, kThrottleStatus, kPcieTx, kPcieRx, kPcieLinkGen, kPcieLinkWidth,
  kPcieMaxLinkGen, kPcieMaxLinkWidth, kNvlinkTx, kNvlinkRx, kEccErrors, kXid,
};

struct MetricSpec {
  Read read;
  const char* name;
  const char* unit;
  format::GpuMetricKind kind;
  uint16_t link = 0xFFFF;
  bool polled = true;              // false: written from the source's events (XID)
  std::string unsupported_reason;  // known before the first reading
};

struct SourceDevice {
  unsigned index = 0;  // the library's own numbering
  std::string uuid;    // as the program's runtime reports it, text
  uint8_t uuid_bytes[16] = {};  // what the program's DeviceInfo carries
  std::string name;
  uint64_t total_bytes = 0;
};

class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  virtual format::GpuMetricSource source() const = 0;
  virtual format::Vendor vendor() const = 0;
  // The visible devices, in the program's order (set by open()).
  const std::vector<SourceDevice>& devices() const { return devices_; }
  // The metrics of device `device` (an index into devices()).
  virtual std::vector<MetricSpec> metrics(size_t device) = 0;
  // Before one reading of `device`: reads what several metrics share.
  virtual void begin_reading(size_t device) { (void)device; }
  // One metric; false with the library's reason.
  virtual bool read(size_t device, const MetricSpec& spec, uint64_t* value, std::string* why) = 0;
  // Instants that come as events (NVML's XIDs): `emit(device, value)`.
  virtual void poll_events(const std::function<void(size_t, uint64_t)>& emit) { (void)emit; }

 protected:
  std::vector<SourceDevice> devices_;
};

// Each opens its library and finds the visible devices: null with `why`
// when the library is absent, fails to start, or leaves no device.
std::unique_ptr<DeviceSource> open_nvml_source(const char* cuda_visible_devices, std::string* why);
struct AmdVisibility {
  const char* rocr_visible_devices = nullptr;
  const char* hip_visible_devices = nullptr;
  const char* cuda_visible_devices = nullptr;
};
std::unique_ptr<DeviceSource> open_rocm_smi_source(const AmdVisibility& visibility, std::string* why);

// "GPU-53494d47-5055-..." -> its 16 bytes (false if it is not that form).
bool parse_uuid(const std::string& text, uint8_t out[16]);

}  // namespace proflaunch::launcher::gpu_metrics
