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

#include "simgpu_device_state.h"

namespace {

// ---- the metrics this simulated chip has, and how each is modelled

enum class Model { kKernelShare, kOccupancy, kTensor, kDramRead, kDramWrite, kPcieRead, kPcieWrite, kNvlinkRx, kNvlinkTx };

struct MetricModel {
  const char* name;
  Model model;
  CUpti_MetricType type;
  const char* unit;
  const char* description;
};

constexpr MetricModel kMetrics[] = {
    {"gr__cycles_active.avg.pct_of_peak_sustained_elapsed", Model::kKernelShare, CUPTI_METRIC_TYPE_RATIO, "%",
     "graphics/compute engine active"},
    {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed", Model::kKernelShare, CUPTI_METRIC_TYPE_RATIO, "%",
     "SMs with at least one warp in flight"},
    {"sm__warps_active_realtime.avg.pct_of_peak_sustained_elapsed", Model::kOccupancy, CUPTI_METRIC_TYPE_RATIO, "%",
     "warps in flight of the SMs' maximum"},
    {"sm__pipe_shared_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed", Model::kTensor,
     CUPTI_METRIC_TYPE_RATIO, "%", "tensor (shared) pipe active"},
    {"dram__bytes_read.sum.per_second", Model::kDramRead, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "DRAM bytes read"},
    {"dram__bytes_write.sum.per_second", Model::kDramWrite, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "DRAM bytes written"},
    {"pcie__read_bytes.sum.per_second", Model::kPcieRead, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "PCIe bytes received"},
    {"pcie__write_bytes.sum.per_second", Model::kPcieWrite, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "PCIe bytes sent"},
    {"nvlrx__bytes.sum.per_second", Model::kNvlinkRx, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "NVLink bytes received"},
    {"nvltx__bytes.sum.per_second", Model::kNvlinkTx, CUPTI_METRIC_TYPE_THROUGHPUT, "byte/second",
     "NVLink bytes sent"},
};
// The simulator's kernels keep half the SMs' warp slots busy while they run.
constexpr double kOccupancyWhileBusy = 0.5;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// Whether `item` is in the comma list `list` ("*" matches everything).
bool listed(const std::string& list, const std::string& item) {
  size_t at = 0;
  while (at <= list.size() && !list.empty()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string entry = list.substr(at, comma - at);
    if (entry == "*" || entry == item) return true;
    at = comma + 1;
  }
  return false;
}

const MetricModel* find_metric(const char* name) {
  if (name == nullptr) return nullptr;
  for (const MetricModel& m : kMetrics)
    if (std::strcmp(m.name, name) == 0) return listed(env("SIMGPU_CUPTI_PM_UNSUPPORTED_METRICS"), name) ? nullptr : &m;
  return nullptr;
}

bool size_ok(size_t given, size_t needed) { return given >= needed; }

uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

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

// ---- the raw samples: what the "hardware" writes and decode copies out

struct RawSample {
  uint64_t start_ns, end_ns;  // CUPTI's clock (CLOCK_REALTIME ns)
  uint64_t kernel_busy_ns, copy_busy_ns;
  uint64_t h2d_bytes, d2h_bytes, p2p_bytes;
};

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

// ---- the objects

struct CUpti_PmSampling_Object {
  size_t device_index = 0;
  simgpu::DeviceStateFile* state = nullptr;
  std::mutex mutex;  // everything below
  std::condition_variable wake;
  bool configured = false;
  bool started = false;
  bool stopping = false;
  uint64_t interval_ns = 0;
  size_t capacity = 0;  // samples the hardware buffer holds
  CUpti_PmSampling_HardwareBuffer_AppendMode append = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  std::deque<RawSample> buffer;
  bool overflow = false;
  std::thread sampler;
};

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

// The "hardware". Kernel time is exact per interval: the driver keeps each
// kernel's interval in the device's shared history, so a sample is the union
// of the kernels that overlap it, however late this thread wakes (samples
// are closed kSettleNs after they end, once the driver has published every
// kernel that started in them). Copies and bytes are counters: read every
// millisecond (or every interval, if longer), what changed since the last
// read is spread evenly over the intervals that read covers. Samples lie on
// the interval's grid. Values are device-wide: every process's work counts.
constexpr uint64_t kSettleNs = 50'000'000;  // a stream worker the machine held back publishes late

uint64_t union_within(std::vector<std::pair<int64_t, int64_t>>& intervals, int64_t from, int64_t to) {
  std::vector<std::pair<int64_t, int64_t>> clipped;
  for (const auto& [start, end] : intervals)
    if (end > from && start < to) clipped.emplace_back(std::max(start, from), std::min(end, to));
  std::sort(clipped.begin(), clipped.end());
  uint64_t busy = 0;
  int64_t covered = from;
  for (const auto& [start, end] : clipped) {
    const int64_t s = std::max(start, covered);
    if (end > s) busy += uint64_t(end - s);
    covered = std::max(covered, end);
  }
  return busy;
}

void sample_device(CUpti_PmSampling_Object* object) {
  simgpu::DeviceStateFile* state = object->state;
  simgpu::BusyHistory& history = state->kernel_history;
  const uint64_t interval = object->interval_ns;
  const uint64_t read_every = std::max<uint64_t>(interval, 1'000'000);
  const int64_t realtime_offset = int64_t(clock_ns(CLOCK_REALTIME)) - int64_t(clock_ns(CLOCK_MONOTONIC));
  uint64_t last = clock_ns(CLOCK_MONOTONIC);
  auto read = [&](double* counters) {
    counters[0] = double(state->copies.busy_until(int64_t(clock_ns(CLOCK_MONOTONIC))));
    counters[1] = double(state->h2d_bytes.load());
    counters[2] = double(state->d2h_bytes.load());
    counters[3] = double(state->p2p_bytes.load());
  };
  double previous[4];
  read(previous);
  // From the oldest kept: a kernel that started before sampling did may
  // still be running (the ones that ended are pruned below).
  const uint64_t published = history.next.load();
  uint64_t seen = published > simgpu::kBusyHistory ? published - simgpu::kBusyHistory : 0;
  std::vector<std::pair<int64_t, int64_t>> kernels;  // intervals that may still overlap an open sample
  std::deque<RawSample> settling;                    // ended, kernel time not counted yet
  uint64_t sample_start = last;
  double accumulated[4] = {};
  auto push = [&](RawSample sample) {
    sample.kernel_busy_ns = union_within(kernels, int64_t(sample.start_ns), int64_t(sample.end_ns));
    sample.start_ns = uint64_t(int64_t(sample.start_ns) + realtime_offset);
    sample.end_ns = uint64_t(int64_t(sample.end_ns) + realtime_offset);
    if (object->buffer.size() < object->capacity) {
      object->buffer.push_back(sample);
    } else if (object->append == CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST) {
      object->buffer.pop_front();
      object->buffer.push_back(sample);
    } else {
      object->overflow = true;
    }
  };
  std::unique_lock lock(object->mutex);
  while (true) {
    const bool stopping = object->stopping;
    if (!stopping) object->wake.wait_for(lock, std::chrono::nanoseconds(read_every));
    const uint64_t now = clock_ns(CLOCK_MONOTONIC);
    // New kernel intervals, up to the first one still being written.
    const uint64_t next = history.next.load();
    if (next - seen > simgpu::kBusyHistory) seen = next - simgpu::kBusyHistory;
    for (; seen < next; ++seen) {
      const auto& entry = history.entries[seen % simgpu::kBusyHistory];
      const int64_t start = entry.start_ns.load(), end = entry.end_ns.load();
      if (end < start) break;  // being written: next time
      kernels.emplace_back(start, end);
    }
    double current[4];
    read(current);
    const double span = double(now - last);
    uint64_t at = last;
    while (span > 0 && at < now) {
      const uint64_t sample_end = sample_start + interval;
      const uint64_t upto = std::min(now, sample_end);
      const double share = double(upto - at) / span;
      for (int i = 0; i < 4; ++i) accumulated[i] += (current[i] - previous[i]) * share;
      at = upto;
      if (upto == sample_end) {
        settling.push_back(RawSample{sample_start, sample_end, 0, uint64_t(accumulated[0] + 0.5),
                                     uint64_t(accumulated[1] + 0.5), uint64_t(accumulated[2] + 0.5),
                                     uint64_t(accumulated[3] + 0.5)});
        sample_start = sample_end;
        std::memset(accumulated, 0, sizeof accumulated);
      }
    }
    std::memcpy(previous, current, sizeof previous);
    last = now;
    while (!settling.empty() && (stopping || settling.front().end_ns + kSettleNs <= now)) {
      push(settling.front());
      settling.pop_front();
    }
    // Intervals that ended before every open sample began are done with.
    const int64_t oldest_open = int64_t(settling.empty() ? sample_start : settling.front().start_ns);
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                 [&](const auto& k) { return k.second <= oldest_open; }),
                  kernels.end());
    if (stopping) return;
  }
}

double evaluate(const MetricModel& metric, const RawSample& s) {
  const double duration = s.end_ns > s.start_ns ? double(s.end_ns - s.start_ns) : 1.0;
  const double per_second = 1e9 / duration;
  switch (metric.model) {
    case Model::kKernelShare: return std::min(100.0, 100.0 * double(s.kernel_busy_ns) / duration);
    case Model::kOccupancy: return std::min(100.0, 100.0 * kOccupancyWhileBusy * double(s.kernel_busy_ns) / duration);
    case Model::kTensor: return 0.0;
    case Model::kDramRead: return double(s.d2h_bytes + s.p2p_bytes) * per_second;
    case Model::kDramWrite: return double(s.h2d_bytes) * per_second;
    case Model::kPcieRead: return double(s.h2d_bytes) * per_second;
    case Model::kPcieWrite: return double(s.d2h_bytes) * per_second;
    case Model::kNvlinkRx: return 0.0;
    case Model::kNvlinkTx: return double(s.p2p_bytes) * per_second;
  }
  return 0.0;
}

void stop_sampler(CUpti_PmSampling_Object* object) {
  std::thread sampler;
  {
    std::lock_guard lock(object->mutex);
    if (!object->started) return;
    object->stopping = true;
    object->started = false;
    sampler = std::move(object->sampler);
  }
  object->wake.notify_all();
  if (sampler.joinable()) sampler.join();
}

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
    for (const MetricModel& m : kMetrics)
      if (find_metric(m.name) != nullptr) names[m.type].push_back(m.name);
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
