// NVML as the sampler reaches it: libnvidia-ml.so.1 opened with dlopen (the
// launcher does not link it: a machine without it still runs), its entry
// points resolved by name. Declarations of the few types used, from NVML's
// API reference (nvml.h is not installed on most machines that build this;
// layouts as the real header has them: tests/simgpu/nvml/nvml_api.h is the
// simulator's own copy, checked against bindings generated from nvml.h).
#pragma once

#include <cstdint>
#include <string>

namespace proflaunch::launcher::gpu_metrics {

namespace nvml {
using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kNotSupported = 3;
inline constexpr Return kTimeout = 10;
using Device = struct nvmlDevice_st*;
using EventSet = struct nvmlEventSet_st*;

struct PciInfo {  // nvmlPciInfo_t (v3)
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};
struct Memory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
union Value {  // nvmlValue_t
  double dVal;
  unsigned uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
};
struct FieldValue {  // nvmlFieldValue_t
  unsigned fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  Return nvmlReturn;
  Value value;
};
struct EventData {  // nvmlEventData_t
  Device device;
  unsigned long long eventType, eventData;
  unsigned gpuInstanceId, computeInstanceId;
};
static_assert(sizeof(PciInfo) == 68 && sizeof(FieldValue) == 40 && sizeof(EventData) == 32);

inline constexpr unsigned kClockSm = 1, kClockMem = 2;  // nvmlClockType_t
inline constexpr unsigned kTemperatureGpu = 0;
inline constexpr unsigned kPcieTxBytes = 0, kPcieRxBytes = 1;
inline constexpr unsigned kMemoryErrorUncorrected = 1, kVolatileEcc = 0;
inline constexpr unsigned kFieldNvlinkDataTx = 138, kFieldNvlinkDataRx = 139;
inline constexpr unsigned kMaxNvlinks = 18;
inline constexpr unsigned long long kEventXid = 8;
}  // namespace nvml

struct NvmlLibrary {
  void* handle = nullptr;
  nvml::Return (*Init_v2)() = nullptr;
  nvml::Return (*Shutdown)() = nullptr;
  const char* (*ErrorString)(nvml::Return) = nullptr;
  nvml::Return (*DeviceGetCount_v2)(unsigned*) = nullptr;
  nvml::Return (*DeviceGetHandleByIndex_v2)(unsigned, nvml::Device*) = nullptr;
  nvml::Return (*DeviceGetName)(nvml::Device, char*, unsigned) = nullptr;
  nvml::Return (*DeviceGetUUID)(nvml::Device, char*, unsigned) = nullptr;
  nvml::Return (*DeviceGetPciInfo_v3)(nvml::Device, nvml::PciInfo*) = nullptr;
  nvml::Return (*DeviceGetUtilizationRates)(nvml::Device, nvml::Utilization*) = nullptr;
  nvml::Return (*DeviceGetMemoryInfo)(nvml::Device, nvml::Memory*) = nullptr;
  nvml::Return (*DeviceGetClockInfo)(nvml::Device, unsigned, unsigned*) = nullptr;
  nvml::Return (*DeviceGetPowerUsage)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*DeviceGetEnforcedPowerLimit)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*DeviceGetTemperature)(nvml::Device, unsigned, unsigned*) = nullptr;
  nvml::Return (*DeviceGetCurrentClocksThrottleReasons)(nvml::Device, unsigned long long*) = nullptr;
  nvml::Return (*DeviceGetPcieThroughput)(nvml::Device, unsigned, unsigned*) = nullptr;
  nvml::Return (*DeviceGetCurrPcieLinkGeneration)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*DeviceGetCurrPcieLinkWidth)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*DeviceGetMaxPcieLinkGeneration)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*DeviceGetMaxPcieLinkWidth)(nvml::Device, unsigned*) = nullptr;
  nvml::Return (*DeviceGetNvLinkState)(nvml::Device, unsigned, int*) = nullptr;
  nvml::Return (*DeviceGetFieldValues)(nvml::Device, int, nvml::FieldValue*) = nullptr;
  nvml::Return (*DeviceGetTotalEccErrors)(nvml::Device, unsigned, unsigned, unsigned long long*) = nullptr;
  nvml::Return (*EventSetCreate)(nvml::EventSet*) = nullptr;
  nvml::Return (*DeviceRegisterEvents)(nvml::Device, unsigned long long, nvml::EventSet) = nullptr;
  nvml::Return (*EventSetWait_v2)(nvml::EventSet, nvml::EventData*, unsigned) = nullptr;
  nvml::Return (*EventSetFree)(nvml::EventSet) = nullptr;

  // dlopen + nvmlInit_v2. False with `why` ("libnvidia-ml.so.1: cannot open
  // shared object file...", "nvmlInit failed: Driver Not Loaded").
  bool open(std::string* why);
  void close();
  std::string error_text(nvml::Return result) const;
};

}  // namespace proflaunch::launcher::gpu_metrics
