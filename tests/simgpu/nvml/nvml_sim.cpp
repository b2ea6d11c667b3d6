// Simulated libnvidia-ml.so.1: NVML's API (nvml_api.h) answering from the
// simulated devices' state that every process's simulated driver publishes
// (simgpu_device_state.h), so a sampler in another process sees the
// program's work. Knows nothing about the profiler.
//
// The machine: SIMGPU_DEVICE_COUNT devices (every one, as NVML ignores
// CUDA_VISIBLE_DEVICES), an H100-like part. Switches (README.md):
//   SIMGPU_NVML_UNSUPPORTED=fn[@dev],...  those functions return NVML_ERROR_NOT_SUPPORTED
//   SIMGPU_NVML_THROTTLE=dev=power|thermal,...  clocks held down, with the reason
//   SIMGPU_NVML_PCIE_LINK=dev=GENxWIDTH,...  the link trained below its gen 5 x16
//   SIMGPU_NVML_NVLINK_LINKS=N  links per device (0: none, NOT_SUPPORTED)
//   SIMGPU_NVML_INIT_ERROR=N  nvmlInit returns N (e.g. 9: driver not loaded)
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "nvml_api.h"
#include "simgpu_device_state.h"

using simgpu::DeviceStateFile;

namespace {

constexpr unsigned kMaxSmClockMhz = 1980;
constexpr unsigned kIdleSmClockMhz = 345;
constexpr unsigned kThrottledSmClockMhz = 1215;
constexpr unsigned kMemClockMhz = 2619;
constexpr unsigned kPowerLimitMw = 700'000;
constexpr unsigned kIdlePowerMw = 90'000;
constexpr int kPciBusBase = 0x10;  // as the simulated driver's cuDeviceGetPCIBusId
constexpr int64_t kMaxWindowNs = 1'000'000'000;  // NVML's longest utilization sample period

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

bool process_alive(uint32_t pid) { return pid != 0 && (kill(pid_t(pid), 0) == 0 || errno == EPERM); }

// One window per reading: what changed since this process last asked.
struct Window {
  int64_t at_ns = 0;
  uint64_t value = 0;
  // The rate over the time since the previous reading (per second, or
  // busy ns per ns as a percentage).
  double advance(int64_t now, uint64_t current) {
    const int64_t dt = now - at_ns;
    double rate = 0;
    if (at_ns != 0 && dt > 0) rate = double(current - value) / double(dt);
    if (at_ns == 0 || dt > 0) {
      at_ns = now;
      value = current;
    }
    return rate;
  }
};

}  // namespace

struct nvmlDevice_st {
  unsigned index = 0;
  DeviceStateFile* file = nullptr;
  uint64_t default_total_bytes = 0;
  std::string throttle;  // "", "power", "thermal"
  unsigned link_gen = 5, link_width = 16;
  std::mutex mutex;  // the windows
  Window kernels, copies, tx, rx;
  int64_t last_util_ns = 0;
  unsigned last_gpu_util = 0, last_mem_util = 0;
};

struct nvmlEventSet_st {
  struct Registered {
    nvmlDevice_st* device;
    unsigned long long types;
    uint64_t seen_xids;
  };
  std::vector<Registered> devices;
};

namespace {

std::mutex g_mutex;
int g_init_count = 0;
std::vector<nvmlDevice_st*> g_devices;  // created once, kept across shutdowns
std::string g_unsupported;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// "dev=value,..." -> value for `index`, or "".
std::string per_device(const std::string& list, unsigned index) {
  size_t at = 0;
  while (at < list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(at, comma - at);
    const size_t eq = item.find('=');
    if (eq != std::string::npos && (item.substr(0, eq) == "*" || item.substr(0, eq) == std::to_string(index)))
      return item.substr(eq + 1);
    at = comma + 1;
  }
  return "";
}

DeviceStateFile* map_state(unsigned index) {
  std::string dir = env("SIMGPU_STATE_DIR");
  if (dir.empty()) dir = "/dev/shm/simgpu-" + std::to_string(getuid());
  mkdir(dir.c_str(), 0700);
  const std::string path = dir + "/gpu" + std::to_string(index);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return nullptr;
  struct stat info;
  if (fstat(fd, &info) != 0 ||
      (info.st_size < off_t(sizeof(DeviceStateFile)) && ftruncate(fd, sizeof(DeviceStateFile)) != 0)) {
    close(fd);
    return nullptr;
  }
  void* mapped = mmap(nullptr, sizeof(DeviceStateFile), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  return mapped == MAP_FAILED ? nullptr : static_cast<DeviceStateFile*>(mapped);
}

bool initialized() {
  std::lock_guard lock(g_mutex);
  return g_init_count > 0;
}

// The function `name` is switched off for `device` by SIMGPU_NVML_UNSUPPORTED.
bool unsupported(const char* name, const nvmlDevice_st* device) {
  const std::string& list = g_unsupported;
  size_t at = 0;
  while (at < list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(at, comma - at);
    at = comma + 1;
    const size_t sign = item.find('@');
    if (sign != std::string::npos) {
      if (device == nullptr || item.substr(sign + 1) != std::to_string(device->index)) continue;
      item.resize(sign);
    }
    if (item == name) return true;
  }
  return false;
}

#define NVML_CHECK_DEVICE(device, name)                               \
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;                 \
  if ((device) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;         \
  if (unsupported(name, device)) return NVML_ERROR_NOT_SUPPORTED

uint64_t used_bytes(const nvmlDevice_st* device) {
  if (device->file == nullptr) return 0;
  uint64_t used = 0;
  for (const auto& slot : device->file->slots) {
    const uint32_t pid = slot.pid.load();
    if (process_alive(pid)) used += slot.used_bytes.load();
  }
  return used;
}

// Utilization over the time since the previous query (NVML: "over the past
// sample period", 1/6 s to 1 s; the first query covers the last second).
void utilization(nvmlDevice_st* device, unsigned* gpu, unsigned* memory) {
  std::lock_guard lock(device->mutex);
  const int64_t now = now_ns();
  if (device->file == nullptr) {
    *gpu = *memory = 0;
    return;
  }
  // Two readings closer than 1 ms (the sampler reads several metrics in a
  // row) answer the same.
  if (device->last_util_ns != 0 && now - device->last_util_ns < 1'000'000) {
    *gpu = device->last_gpu_util;
    *memory = device->last_mem_util;
    return;
  }
  auto percent = [&](Window& window, const simgpu::BusyClock& clock) {
    if (window.at_ns == 0 || now - window.at_ns > kMaxWindowNs) {
      window.at_ns = now - kMaxWindowNs;
      window.value = clock.busy_until(window.at_ns);
    }
    const double rate = window.advance(now, clock.busy_until(now));
    const double clamped = rate < 0 ? 0 : rate > 1 ? 1 : rate;
    return unsigned(clamped * 100 + 0.5);
  };
  device->last_gpu_util = percent(device->kernels, device->file->kernels);
  device->last_mem_util = percent(device->copies, device->file->copies);
  device->last_util_ns = now;
  *gpu = device->last_gpu_util;
  *memory = device->last_mem_util;
}

unsigned current_gpu_util(nvmlDevice_st* device) {
  unsigned gpu = 0, memory = 0;
  utilization(device, &gpu, &memory);
  return gpu;
}

}  // namespace

extern "C" {

nvmlReturn_t nvmlInitWithFlags(unsigned int) {
  const std::string forced = env("SIMGPU_NVML_INIT_ERROR");
  if (!forced.empty()) return nvmlReturn_t(std::atoi(forced.c_str()));
  std::lock_guard lock(g_mutex);
  if (g_init_count++ > 0) return NVML_SUCCESS;
  g_unsupported = env("SIMGPU_NVML_UNSUPPORTED");
  if (!g_devices.empty()) return NVML_SUCCESS;
  const std::string count_text = env("SIMGPU_DEVICE_COUNT");
  const int count = count_text.empty() ? 2 : std::atoi(count_text.c_str());
  const std::string memory_text = env("SIMGPU_DEVICE_MEMORY_MIB");
  const uint64_t memory_mib = memory_text.empty() ? 16384 : std::strtoull(memory_text.c_str(), nullptr, 10);
  const std::string throttle = env("SIMGPU_NVML_THROTTLE");
  const std::string links = env("SIMGPU_NVML_PCIE_LINK");
  for (int i = 0; i < count; ++i) {
    auto* device = new nvmlDevice_st;
    device->index = unsigned(i);
    device->file = map_state(unsigned(i));
    device->default_total_bytes = memory_mib << 20;
    device->throttle = per_device(throttle, unsigned(i));
    const std::string link = per_device(links, unsigned(i));  // "gen3x8"
    unsigned gen = 0, width = 0;
    if (std::sscanf(link.c_str(), "gen%ux%u", &gen, &width) == 2) {
      device->link_gen = gen;
      device->link_width = width;
    }
    g_devices.push_back(device);
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void) {
  std::lock_guard lock(g_mutex);
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --g_init_count;
  return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (version == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (std::snprintf(version, length, "580.65.06") >= int(length)) return NVML_ERROR_INSUFFICIENT_SIZE;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = unsigned(g_devices.size());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= g_devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *device = g_devices[index];
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetIndex");
  if (index == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *index = device->index;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetName");
  if (name == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::string text = env("SIMGPU_DEVICE_NAME");
  if (text.empty()) text = "Simulated GPU";
  if (std::snprintf(name, length, "%s", text.c_str()) >= int(length)) return NVML_ERROR_INSUFFICIENT_SIZE;
  return NVML_SUCCESS;
}

// The same 16 bytes as the simulated driver's cuDeviceGetUuid, in NVML's
// text form "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetUUID");
  if (uuid == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned char bytes[16] = {0x53, 0x49, 0x4d, 0x47, 0x50, 0x55, 0x2d, 0x73, 0x69, 0x6d, 0x2d, 0x00};
  const uint32_t index = device->index;
  std::memcpy(bytes + 12, &index, sizeof index);
  char text[64];
  int at = std::snprintf(text, sizeof text, "GPU-");
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text[at++] = '-';
    at += std::snprintf(text + at, sizeof text - size_t(at), "%02x", bytes[i]);
  }
  if (unsigned(at) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(uuid, text, size_t(at) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetPciInfo_v3");
  if (pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  std::memset(pci, 0, sizeof *pci);
  pci->domain = 0;
  pci->bus = unsigned(kPciBusBase) + device->index;
  pci->device = 0;
  pci->pciDeviceId = 0x233510de;  // vendor 10de (NVIDIA)
  std::snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "0000:%02x:00.0", pci->bus);
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02x:00.0", pci->bus);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetMemoryInfo");
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  uint64_t total = device->file != nullptr ? device->file->total_bytes.load() : 0;
  if (total == 0) total = device->default_total_bytes;
  const uint64_t used = used_bytes(device);
  memory->total = total;
  memory->used = used < total ? used : total;
  memory->free = total - memory->used;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* rates) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetUtilizationRates");
  if (rates == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  utilization(device, &rates->gpu, &rates->memory);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetClockInfo");
  if (clock == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (type == NVML_CLOCK_MEM) {
    *clock = kMemClockMhz;
  } else if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) {
    const unsigned util = current_gpu_util(device);
    *clock = util == 0 ? kIdleSmClockMhz : device->throttle.empty() ? kMaxSmClockMhz : kThrottledSmClockMhz;
  } else {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int* clock) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetMaxClockInfo");
  if (clock == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *clock = type == NVML_CLOCK_MEM ? kMemClockMhz : kMaxSmClockMhz;
  return NVML_SUCCESS;
}

// Power follows utilization; a power-throttled device sits at its limit.
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* power) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetPowerUsage");
  if (power == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned util = current_gpu_util(device);
  if (device->throttle == "power" && util > 0)
    *power = kPowerLimitMw;
  else
    *power = kIdlePowerMw + (kPowerLimitMw - kIdlePowerMw) / 100 * util * 8 / 10;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int* limit) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetEnforcedPowerLimit");
  if (limit == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = kPowerLimitMw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetTemperature");
  if (temp == nullptr || sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = device->throttle == "thermal" ? 91 : 34 + current_gpu_util(device) * 30 / 100;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* reasons) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (reasons == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned util = current_gpu_util(device);
  if (util == 0)
    *reasons = nvmlClocksThrottleReasonGpuIdle;
  else if (device->throttle == "power")
    *reasons = nvmlClocksThrottleReasonSwPowerCap;
  else if (device->throttle == "thermal")
    *reasons = nvmlClocksThrottleReasonSwThermalSlowdown | nvmlClocksThrottleReasonHwThermalSlowdown;
  else
    *reasons = 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksThrottleReasons(device, reasons);
}

// KiB/s since this process's previous query (NVML: over a 20 ms window).
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetPcieThroughput");
  if (value == nullptr || (counter != NVML_PCIE_UTIL_TX_BYTES && counter != NVML_PCIE_UTIL_RX_BYTES))
    return NVML_ERROR_INVALID_ARGUMENT;
  if (device->file == nullptr) {
    *value = 0;
    return NVML_SUCCESS;
  }
  std::lock_guard lock(device->mutex);
  const bool tx = counter == NVML_PCIE_UTIL_TX_BYTES;
  const uint64_t bytes = tx ? device->file->d2h_bytes.load() : device->file->h2d_bytes.load();
  const double bytes_per_ns = (tx ? device->tx : device->rx).advance(now_ns(), bytes);
  *value = unsigned(bytes_per_ns * 1e9 / 1024);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetCurrPcieLinkGeneration");
  if (gen == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *gen = device->link_gen;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetCurrPcieLinkWidth");
  if (width == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *width = device->link_width;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t device, unsigned int* gen) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetMaxPcieLinkGeneration");
  if (gen == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *gen = 5;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t device, unsigned int* width) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetMaxPcieLinkWidth");
  if (width == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *width = 16;
  return NVML_SUCCESS;
}

static unsigned nvlink_links() {
  const std::string text = env("SIMGPU_NVML_NVLINK_LINKS");
  const int links = text.empty() ? 0 : std::atoi(text.c_str());
  return links < 0 ? 0 : links > NVML_NVLINK_MAX_LINKS ? NVML_NVLINK_MAX_LINKS : unsigned(links);
}

nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t* active) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetNvLinkState");
  if (active == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned links = nvlink_links();
  if (links == 0) return NVML_ERROR_NOT_SUPPORTED;  // a PCIe-only part
  if (link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  *active = link < links ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

// NVLink data throughput counters (KiB since the driver loaded), per link in
// scopeId. The simulator counts what a device sends to another (peer
// copies), spread evenly over its links; it does not track what it receives.
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetFieldValues");
  if (values == nullptr || count < 0) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned links = nvlink_links();
  const int64_t now = now_ns();
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& field = values[i];
    field.timestamp = now / 1000;
    field.latencyUsec = 0;
    field.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    if ((field.fieldId != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX && field.fieldId != NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX) ||
        links == 0 || field.scopeId >= links) {
      field.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    const uint64_t sent = device->file != nullptr ? device->file->p2p_bytes.load() : 0;
    field.value.ullVal = field.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? sent / links / 1024 : 0;
    field.nvmlReturn = NVML_SUCCESS;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t type, nvmlEccCounterType_t,
                                         unsigned long long* counts) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceGetTotalEccErrors");
  if (counts == nullptr || (type != NVML_MEMORY_ERROR_TYPE_CORRECTED && type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED))
    return NVML_ERROR_INVALID_ARGUMENT;
  *counts = 0;  // the simulated memory never fails
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *set = new nvmlEventSet_st;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
  NVML_CHECK_DEVICE(device, "nvmlDeviceRegisterEvents");
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if ((types & ~(nvmlEventTypeXidCriticalError | nvmlEventTypeSingleBitEccError | nvmlEventTypeDoubleBitEccError)) != 0)
    return NVML_ERROR_NOT_SUPPORTED;
  const uint64_t seen = device->file != nullptr ? device->file->xid_count.load() : 0;
  set->devices.push_back({device, types, seen});
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr || data == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const int64_t deadline = now_ns() + int64_t(timeoutms) * 1'000'000;
  for (;;) {
    for (auto& registered : set->devices) {
      DeviceStateFile* file = registered.device->file;
      if (file == nullptr || (registered.types & nvmlEventTypeXidCriticalError) == 0) continue;
      const uint64_t count = file->xid_count.load();
      if (registered.seen_xids >= count) continue;
      // Entries older than the last 8 are gone; report the oldest kept.
      if (count - registered.seen_xids > 8) registered.seen_xids = count - 8;
      const auto& entry = file->xids[registered.seen_xids % 8];
      ++registered.seen_xids;
      std::memset(data, 0, sizeof *data);
      data->device = registered.device;
      data->eventType = nvmlEventTypeXidCriticalError;
      data->eventData = entry.code.load();
      data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
      return NVML_SUCCESS;
    }
    if (now_ns() >= deadline) return NVML_ERROR_TIMEOUT;
    usleep(5000);
  }
}

nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  delete set;
  return NVML_SUCCESS;
}

}  // extern "C"
