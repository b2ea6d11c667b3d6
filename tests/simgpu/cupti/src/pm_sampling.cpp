// The simulated CUPTI PM sampling API (cupti_pmsampling.h) and the host and
// target profiler calls a PM sampling client makes around it
// (cupti_profiler_target.h, cupti_target.h, cupti_profiler_host.h), over the
// simulated devices' shared state (../../include/simgpu_device_state.h).
// The model and what it assumes where the documentation is silent are in
// ../../README.md, "CUPTI PM sampling".
//
// The documented sequence, which this follows and checks:
//   cuptiProfilerInitialize; cuptiDeviceGetChipName;
//   cuptiPmSamplingGetCounterAvailability (size, then image);
//   cuptiProfilerHostInitialize(PM_SAMPLING, chip, availability);
//   cuptiProfilerHostConfigAddMetrics; GetConfigImageSize; GetConfigImage;
//   cuptiPmSamplingEnable(device) -> object; SetConfig; GetCounterDataSize;
//   CounterDataImageInitialize; Start; (DecodeData; GetCounterDataInfo;
//   CounterDataGetSampleInfo / HostEvaluateToGpuValues per sample;
//   CounterDataImageInitialize to reuse it)*; Stop; decode the rest; Disable.
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pm_hardware.h"
#include "simgpu_device_state.h"

using namespace simgpu_pm;

namespace {

bool size_ok(size_t given, size_t needed) { return given >= needed; }

// ---- the driver: device count and each device's machine index

struct Driver {
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*pci_bus_id)(char*, int, CUdevice) = nullptr;
  CUresult (*attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver out;
    void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) return out;
    out.device_get_count = reinterpret_cast<decltype(out.device_get_count)>(dlsym(handle, "cuDeviceGetCount"));
    out.device_get = reinterpret_cast<decltype(out.device_get)>(dlsym(handle, "cuDeviceGet"));
    out.pci_bus_id = reinterpret_cast<decltype(out.pci_bus_id)>(dlsym(handle, "cuDeviceGetPCIBusId"));
    out.attribute = reinterpret_cast<decltype(out.attribute)>(dlsym(handle, "cuDeviceGetAttribute"));
    return out;
  }();
  return d;
}

// CUPTI_SUCCESS and the device, or why not (no driver, cuInit not called, no such device).
CUptiResult device_of(size_t index, CUdevice* device) {
  const Driver& d = driver();
  int count = 0;
  if (d.device_get_count == nullptr || d.device_get == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  if (d.device_get_count(&count) != CUDA_SUCCESS) return CUPTI_ERROR_NOT_INITIALIZED;
  if (index >= size_t(count) || d.device_get(device, int(index)) != CUDA_SUCCESS) return CUPTI_ERROR_INVALID_DEVICE;
  return CUPTI_SUCCESS;
}

// The machine's device behind the process's ordinal: the driver puts device
// i on PCI bus 0x10 + i (as the simulated NVML reads it).
int physical_index(CUdevice device) {
  char bus[32] = {};
  if (driver().pci_bus_id == nullptr || driver().pci_bus_id(bus, sizeof bus, device) != CUDA_SUCCESS) return -1;
  unsigned domain = 0, number = 0;
  if (std::sscanf(bus, "%x:%x", &domain, &number) != 2 || number < 0x10) return -1;
  return int(number) - 0x10;
}

simgpu::DeviceStateFile* map_state(int physical) {
  std::string dir = env("SIMGPU_STATE_DIR");
  if (dir.empty()) dir = "/dev/shm/simgpu-" + std::to_string(getuid());
  const std::string path = dir + "/" + simgpu::kNvidiaStateFilePrefix + std::to_string(physical);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return nullptr;
  struct stat info;
  if (fstat(fd, &info) != 0 || (info.st_size < off_t(sizeof(simgpu::DeviceStateFile)) &&
                                ftruncate(fd, sizeof(simgpu::DeviceStateFile)) != 0)) {
    close(fd);
    return nullptr;
  }
  void* mapped = mmap(nullptr, sizeof(simgpu::DeviceStateFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return mapped == MAP_FAILED ? nullptr : static_cast<simgpu::DeviceStateFile*>(mapped);
}

const char* chip_name(CUdevice device) {
  int major = 0, minor = 0;
  if (driver().attribute != nullptr) {
    driver().attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    driver().attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
  }
  switch (major * 10 + minor) {
    case 75: return "TU102";
    case 80: return "GA100";
    case 86: return "GA102";
    case 89: return "AD102";
    case 90: return "GH100";
    case 100: return "GB100";
    default: return major * 10 + minor < 75 ? nullptr : "GH100";
  }
}

bool known_chip(const char* name) {
  for (const char* chip : {"TU102", "GA100", "GA102", "AD102", "GH100", "GB100"})
    if (name != nullptr && std::strcmp(chip, name) == 0) return true;
  return false;
}

constexpr char kConfigMagic[8] = {'S', 'I', 'M', 'P', 'M', 'C', 'F', 'G'};
constexpr char kCounterDataMagic[8] = {'S', 'I', 'M', 'P', 'M', 'C', 'D', 'I'};
constexpr char kAvailabilityMagic[8] = {'S', 'I', 'M', 'P', 'M', 'A', 'V', 'L'};
constexpr size_t kAvailabilityBytes = 64;

struct CounterDataHeader {
  char magic[8];
  uint32_t max_samples;
  uint32_t populated;
};

bool counter_data_valid(const uint8_t* image, size_t size) {
  if (image == nullptr || size < sizeof(CounterDataHeader)) return false;
  CounterDataHeader header;
  std::memcpy(&header, image, sizeof header);
  return std::memcmp(header.magic, kCounterDataMagic, 8) == 0 &&
         size >= sizeof header + size_t(header.max_samples) * sizeof(RawSample) && header.populated <= header.max_samples;
}

}  // namespace

struct CUpti_Profiler_Host_Object {
  std::string chip;
  std::vector<const MetricModel*> metrics;
};

namespace {

std::mutex g_mutex;  // the profiler's state below
bool g_profiler_initialized = false;
std::vector<size_t> g_enabled_devices;

bool permission_denied() { return env("SIMGPU_CUPTI_PM_PERMISSION") == "denied"; }
bool device_unsupported(size_t index) { return listed(env("SIMGPU_CUPTI_PM_UNSUPPORTED_DEVICES"), std::to_string(index)); }

}  // namespace

extern "C" {

// ---- cupti_profiler_target.h, cupti_target.h

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Initialize_Params_STRUCT_SIZE))
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard lock(g_mutex);
  g_profiler_initialized = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE))
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard lock(g_mutex);
  g_profiler_initialized = false;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Device_GetChipName_Params_STRUCT_SIZE))
    return CUPTI_ERROR_INVALID_PARAMETER;
  CUdevice device = 0;
  if (const CUptiResult r = device_of(p->deviceIndex, &device); r != CUPTI_SUCCESS) return r;
  p->pChipName = chip_name(device);
  return p->pChipName != nullptr ? CUPTI_SUCCESS : CUPTI_ERROR_NOT_SUPPORTED;
}

// ---- cupti_profiler_host.h

CUptiResult CUPTIAPI cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE))
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (p->profilerType != CUPTI_PROFILER_TYPE_PM_SAMPLING && p->profilerType != CUPTI_PROFILER_TYPE_RANGE_PROFILER)
    return CUPTI_ERROR_INVALID_PARAMETER;
  if (!known_chip(p->pChipName)) return CUPTI_ERROR_INVALID_CHIP_NAME;
  if (p->pCounterAvailabilityImage != nullptr && std::memcmp(p->pCounterAvailabilityImage, kAvailabilityMagic, 8) != 0)
    return CUPTI_ERROR_INVALID_PARAMETER;
  auto* host = new CUpti_Profiler_Host_Object;
  host->chip = p->pChipName;
  p->pHostObject = host;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  delete p->pHostObject;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetBaseMetrics(CUpti_Profiler_Host_GetBaseMetrics_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  // Names live for the library's lifetime, as the real library's do.
  static std::vector<const char*> names[CUPTI_METRIC_TYPE__COUNT];
  static std::once_flag once;
  std::call_once(once, [] {
    for (const MetricModel* m = metrics_begin(); m != metrics_end(); ++m)
      if (find_metric(m->name) != nullptr) names[m->type].push_back(m->name);
  });
  if (size_t(p->metricType) >= CUPTI_METRIC_TYPE__COUNT) return CUPTI_ERROR_INVALID_PARAMETER;
  p->ppMetricNames = names[p->metricType].data();
  p->numMetrics = names[p->metricType].size();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetMetricProperties(CUpti_Profiler_Host_GetMetricProperties_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  const MetricModel* metric = find_metric(p->pMetricName);
  if (metric == nullptr) return CUPTI_ERROR_INVALID_METRIC_NAME;
  p->pDescription = metric->description;
  p->pHwUnit = "gpu";
  p->pDimUnit = metric->unit;
  p->metricType = metric->type;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr || (p->numMetrics > 0 && p->ppMetricNames == nullptr))
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::vector<const MetricModel*> added;
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const MetricModel* metric = find_metric(p->ppMetricNames[i]);
    if (metric == nullptr) return CUPTI_ERROR_INVALID_METRIC_NAME;  // nothing of this call is added
    added.push_back(metric);
  }
  for (const MetricModel* metric : added) p->pHostObject->metrics.push_back(metric);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  size_t bytes = sizeof kConfigMagic + sizeof(uint32_t);
  for (const MetricModel* metric : p->pHostObject->metrics) bytes += std::strlen(metric->name) + 1;
  p->configImageSize = bytes;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr || p->pConfigImage == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::vector<uint8_t> image(kConfigMagic, kConfigMagic + sizeof kConfigMagic);
  const uint32_t count = uint32_t(p->pHostObject->metrics.size());
  image.insert(image.end(), reinterpret_cast<const uint8_t*>(&count), reinterpret_cast<const uint8_t*>(&count) + 4);
  for (const MetricModel* metric : p->pHostObject->metrics)
    image.insert(image.end(), metric->name, metric->name + std::strlen(metric->name) + 1);
  if (p->configImageSize < image.size()) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  std::memcpy(p->pConfigImage, image.data(), image.size());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostGetNumOfPasses(CUpti_Profiler_Host_GetNumOfPasses_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE) ||
      p->pConfigImage == nullptr || p->configImageSize < sizeof kConfigMagic ||
      std::memcmp(p->pConfigImage, kConfigMagic, sizeof kConfigMagic) != 0)
    return CUPTI_ERROR_INVALID_PARAMETER;
  p->numOfPasses = 1;  // every simulated metric fits one pass
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE) ||
      p->pHostObject == nullptr || !counter_data_valid(p->pCounterDataImage, p->counterDataImageSize) ||
      (p->numMetrics > 0 && (p->ppMetricNames == nullptr || p->pMetricValues == nullptr)))
    return CUPTI_ERROR_INVALID_PARAMETER;
  CounterDataHeader header;
  std::memcpy(&header, p->pCounterDataImage, sizeof header);
  if (p->rangeIndex >= header.populated) return CUPTI_ERROR_INVALID_PARAMETER;
  RawSample sample;
  std::memcpy(&sample, p->pCounterDataImage + sizeof header + p->rangeIndex * sizeof(RawSample), sizeof sample);
  for (size_t i = 0; i < p->numMetrics; ++i) {
    const MetricModel* metric = find_metric(p->ppMetricNames[i]);
    if (metric == nullptr) return CUPTI_ERROR_INVALID_METRIC_NAME;
    p->pMetricValues[i] = evaluate(*metric, sample);
  }
  return CUPTI_SUCCESS;
}

// ---- cupti_pmsampling.h

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterAvailability(CUpti_PmSampling_GetCounterAvailability_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE))
    return CUPTI_ERROR_INVALID_PARAMETER;
  {
    std::lock_guard lock(g_mutex);
    if (!g_profiler_initialized) return CUPTI_ERROR_NOT_INITIALIZED;
  }
  CUdevice device = 0;
  if (const CUptiResult r = device_of(p->deviceIndex, &device); r != CUPTI_SUCCESS) return r;
  if (p->pCounterAvailabilityImage == nullptr) {
    p->counterAvailabilityImageSize = kAvailabilityBytes;
    return CUPTI_SUCCESS;
  }
  if (permission_denied()) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  if (p->counterAvailabilityImageSize < kAvailabilityBytes) return CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT;
  std::memset(p->pCounterAvailabilityImage, 0, kAvailabilityBytes);
  std::memcpy(p->pCounterAvailabilityImage, kAvailabilityMagic, 8);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingEnable(CUpti_PmSampling_Enable_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_Enable_Params_STRUCT_SIZE))
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::lock_guard lock(g_mutex);
  if (!g_profiler_initialized) return CUPTI_ERROR_NOT_INITIALIZED;
  CUdevice device = 0;
  if (const CUptiResult r = device_of(p->deviceIndex, &device); r != CUPTI_SUCCESS) return r;
  if (permission_denied()) return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
  if (device_unsupported(p->deviceIndex) || chip_name(device) == nullptr) return CUPTI_ERROR_NOT_SUPPORTED;
  for (size_t enabled : g_enabled_devices)
    if (enabled == p->deviceIndex) return CUPTI_ERROR_INVALID_OPERATION;  // one session per device
  const int physical = physical_index(device);
  simgpu::DeviceStateFile* state = physical >= 0 ? map_state(physical) : nullptr;
  if (state == nullptr) return CUPTI_ERROR_UNKNOWN;
  auto* object = new CUpti_PmSampling_Object;
  object->device_index = p->deviceIndex;
  object->state = state;
  g_enabled_devices.push_back(p->deviceIndex);
  p->pPmSamplingObject = object;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingDisable(CUpti_PmSampling_Disable_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_Disable_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  CUpti_PmSampling_Object* object = p->pPmSamplingObject;
  stop_sampler(object);
  {
    std::lock_guard lock(g_mutex);
    for (auto it = g_enabled_devices.begin(); it != g_enabled_devices.end(); ++it) {
      if (*it != object->device_index) continue;
      g_enabled_devices.erase(it);
      break;
    }
  }
  munmap(object->state, sizeof(simgpu::DeviceStateFile));
  delete object;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingSetConfig(CUpti_PmSampling_SetConfig_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr || p->pConfig == nullptr || p->configSize < sizeof kConfigMagic ||
      std::memcmp(p->pConfig, kConfigMagic, sizeof kConfigMagic) != 0 || p->samplingInterval == 0 ||
      p->hardwareBufferSize == 0 || size_t(p->triggerMode) >= CUPTI_PM_SAMPLING_TRIGGER_MODE_COUNT)
    return CUPTI_ERROR_INVALID_PARAMETER;
  CUpti_PmSampling_Object* object = p->pPmSamplingObject;
  std::lock_guard lock(object->mutex);
  if (object->started) return CUPTI_ERROR_INVALID_OPERATION;
  // SYSCLK intervals are clock cycles: the simulated SYS clock runs at 1 GHz.
  object->interval_ns = p->samplingInterval;
  object->capacity = std::max<size_t>(1, p->hardwareBufferSize / sizeof(RawSample));
  object->append = p->hwBufferAppendMode;
  object->configured = true;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingStart(CUpti_PmSampling_Start_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_Start_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  CUpti_PmSampling_Object* object = p->pPmSamplingObject;
  std::lock_guard lock(object->mutex);
  if (!object->configured || object->started) return CUPTI_ERROR_INVALID_OPERATION;
  object->started = true;
  object->stopping = false;
  object->sampler = std::thread(sample_device, object);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingStop(CUpti_PmSampling_Stop_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_Stop_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr)
    return CUPTI_ERROR_INVALID_PARAMETER;
  {
    std::lock_guard lock(p->pPmSamplingObject->mutex);
    if (!p->pPmSamplingObject->started) return CUPTI_ERROR_INVALID_OPERATION;
  }
  stop_sampler(p->pPmSamplingObject);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataSize(CUpti_PmSampling_GetCounterDataSize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr || p->maxSamples == 0 || (p->numMetrics > 0 && p->pMetricNames == nullptr))
    return CUPTI_ERROR_INVALID_PARAMETER;
  for (size_t i = 0; i < p->numMetrics; ++i)
    if (find_metric(p->pMetricNames[i]) == nullptr) return CUPTI_ERROR_INVALID_METRIC_NAME;
  p->counterDataSize = sizeof(CounterDataHeader) + size_t(p->maxSamples) * sizeof(RawSample);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingCounterDataImageInitialize(CUpti_PmSampling_CounterDataImage_Initialize_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr || p->pCounterData == nullptr || p->counterDataSize < sizeof(CounterDataHeader))
    return CUPTI_ERROR_INVALID_PARAMETER;
  CounterDataHeader header{};
  std::memcpy(header.magic, kCounterDataMagic, 8);
  header.max_samples = uint32_t((p->counterDataSize - sizeof header) / sizeof(RawSample));
  header.populated = 0;
  std::memcpy(p->pCounterData, &header, sizeof header);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingDecodeData(CUpti_PmSampling_DecodeData_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE) ||
      p->pPmSamplingObject == nullptr || !counter_data_valid(p->pCounterDataImage, p->counterDataImageSize))
    return CUPTI_ERROR_INVALID_PARAMETER;
  CUpti_PmSampling_Object* object = p->pPmSamplingObject;
  CounterDataHeader header;
  std::memcpy(&header, p->pCounterDataImage, sizeof header);
  std::lock_guard lock(object->mutex);
  if (!object->configured) return CUPTI_ERROR_INVALID_OPERATION;
  while (!object->buffer.empty() && header.populated < header.max_samples) {
    std::memcpy(p->pCounterDataImage + sizeof header + size_t(header.populated) * sizeof(RawSample),
                &object->buffer.front(), sizeof(RawSample));
    object->buffer.pop_front();
    ++header.populated;
  }
  std::memcpy(p->pCounterDataImage, &header, sizeof header);
  p->decodeStopReason = object->buffer.empty() ? CUPTI_PM_SAMPLING_DECODE_STOP_REASON_END_OF_RECORDS
                                               : CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL;
  p->overflow = object->overflow ? 1 : 0;
  object->overflow = false;  // said once; the buffer has room again
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingGetCounterDataInfo(CUpti_PmSampling_GetCounterDataInfo_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE) ||
      !counter_data_valid(p->pCounterDataImage, p->counterDataImageSize))
    return CUPTI_ERROR_INVALID_PARAMETER;
  CounterDataHeader header;
  std::memcpy(&header, p->pCounterDataImage, sizeof header);
  p->numTotalSamples = header.max_samples;
  p->numPopulatedSamples = header.populated;
  p->numCompletedSamples = header.populated;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiPmSamplingCounterDataGetSampleInfo(CUpti_PmSampling_CounterData_GetSampleInfo_Params* p) {
  if (p == nullptr || !size_ok(p->structSize, CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE) ||
      !counter_data_valid(p->pCounterDataImage, p->counterDataImageSize))
    return CUPTI_ERROR_INVALID_PARAMETER;
  CounterDataHeader header;
  std::memcpy(&header, p->pCounterDataImage, sizeof header);
  if (p->sampleIndex >= header.populated) return CUPTI_ERROR_INVALID_PARAMETER;
  RawSample sample;
  std::memcpy(&sample, p->pCounterDataImage + sizeof header + p->sampleIndex * sizeof(RawSample), sizeof sample);
  p->startTimestamp = sample.start_ns;
  p->endTimestamp = sample.end_ns;
  return CUPTI_SUCCESS;
}

}  // extern "C"
