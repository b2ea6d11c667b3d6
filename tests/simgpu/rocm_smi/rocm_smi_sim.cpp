// Simulated librocm_smi64.so.1: ROCm SMI's API, compiled against the real
// rocm_smi.h (so every signature and constant is ROCm's own), answering from
// the state that the simulated HIP runtime of every process publishes per AMD
// device (simgpu_device_state.h, files "amdgpu<N>"), so a sampler in another
// process sees the program's work. Knows nothing about the profiler.
//
// The machine: SIMGPU_DEVICE_COUNT AMD devices (every one: ROCm SMI ignores
// the visibility variables), an MI210-like part named as the simulated HIP
// runtime names it (SIMGPU_HIP_DEVICE_NAME). Switches (README.md):
//   SIMGPU_ROCM_SMI_UNSUPPORTED=fn[@dev],...  those functions return RSMI_STATUS_NOT_SUPPORTED
//   SIMGPU_ROCM_SMI_PERMISSION=fn[@dev],...   those functions return RSMI_STATUS_PERMISSION
//   SIMGPU_ROCM_SMI_INIT_ERROR=N              rsmi_init returns N (8: RSMI_STATUS_INIT_ERROR)
//   SIMGPU_ROCM_SMI_PCIE_LINK=dev=genGxW,...  the link trained below its gen 4 x16
//   SIMGPU_ROCM_SMI_THROTTLE=dev=BITS,...     gpu_metrics' throttle_status while a kernel runs
//                                             (BITS in hex: the firmware's ASIC-specific bits)
//
// What is modelled, and how real hardware differs:
// - rsmi_dev_busy_percent_get: on real hardware the firmware's GPU activity,
//   an average over a few milliseconds: an instantaneous reading, not a
//   share of the time since the previous call as NVML's. Here: 100 while
//   modelled work (a kernel) runs at the moment of the call, else 0.
//   rsmi_dev_memory_busy_percent_get: the same for copies and memsets.
// - rsmi_dev_pci_throughput_get: as the real one (the amdgpu driver counts
//   PCIe packets for one second, msleep(1000) in the kernel), the call takes
//   a second: the packets the device received (host to device copies) and
//   sent (device to host) during it, at a 256-byte maximum payload.
// - Clocks, power and temperature follow the busy state; ECC counts are 0;
//   gpu_metrics' throttle_status is 0 unless SIMGPU_ROCM_SMI_THROTTLE sets
//   bits for a device (then they are set while a kernel runs, as a power
//   or thermal limit holds a busy part).
#include <fcntl.h>
#include <rocm_smi/rocm_smi.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "simgpu_device_state.h"

using simgpu::DeviceStateFile;

namespace {

constexpr uint64_t kMhz = 1'000'000;
constexpr uint64_t kSysClocksMhz[] = {500, 1000, 1700};  // SCLK levels; the top one while busy
constexpr uint64_t kMemClocksMhz[] = {400, 1600};
constexpr uint64_t kPowerCapMicrowatts = 300'000'000;
constexpr uint64_t kIdlePowerMicrowatts = 42'000'000;
constexpr uint64_t kBusyPowerMicrowatts = 255'000'000;
constexpr int64_t kIdleEdgeMillidegrees = 35'000;
constexpr int64_t kBusyEdgeMillidegrees = 62'000;
constexpr uint64_t kMaxPayloadBytes = 256;
constexpr double kTransferRates[] = {2.5e9, 5e9, 8e9, 16e9};  // T/s of PCIe gen 1..4

struct Device {
  uint32_t index = 0;
  DeviceStateFile* file = nullptr;
  uint64_t default_total_bytes = 0;
  uint32_t link_gen = 4, link_width = 16;
};

std::mutex g_mutex;
int g_init_count = 0;
std::vector<Device> g_devices;  // created once, kept across shutdowns
std::string g_unsupported, g_permission;

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

int64_t now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

bool process_alive(uint32_t pid) { return pid != 0 && (kill(pid_t(pid), 0) == 0 || errno == EPERM); }

DeviceStateFile* map_state(uint32_t index) {
  std::string dir = env("SIMGPU_STATE_DIR");
  if (dir.empty()) dir = "/dev/shm/simgpu-" + std::to_string(getuid());
  mkdir(dir.c_str(), 0700);
  const std::string path = dir + "/" + simgpu::kAmdStateFilePrefix + std::to_string(index);
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

// "dev=value,..." -> value for `index`, or "".
std::string per_device(const std::string& list, uint32_t index) {
  size_t at = 0;
  while (at < list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(at, comma - at);
    at = comma + 1;
    const size_t eq = item.find('=');
    if (eq != std::string::npos && (item.substr(0, eq) == "*" || item.substr(0, eq) == std::to_string(index)))
      return item.substr(eq + 1);
  }
  return "";
}

// `name` is listed in `list` ("fn[@dev],...") for device `index`.
bool listed(const std::string& list, const char* name, uint32_t index) {
  size_t at = 0;
  while (at < list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(at, comma - at);
    at = comma + 1;
    const size_t sign = item.find('@');
    if (sign != std::string::npos) {
      if (item.substr(sign + 1) != std::to_string(index)) continue;
      item.resize(sign);
    }
    if (item == name) return true;
  }
  return false;
}

// Every device function starts here: initialized, a valid index, and the
// switches for this function on this device.
rsmi_status_t check(uint32_t dv_ind, const char* name, Device** device) {
  std::lock_guard lock(g_mutex);
  if (g_init_count == 0) return RSMI_STATUS_INIT_ERROR;
  if (dv_ind >= g_devices.size()) return RSMI_STATUS_INVALID_ARGS;
  if (listed(g_unsupported, name, dv_ind)) return RSMI_STATUS_NOT_SUPPORTED;
  if (listed(g_permission, name, dv_ind)) return RSMI_STATUS_PERMISSION;
  *device = &g_devices[dv_ind];
  return RSMI_STATUS_SUCCESS;
}

#define RSMI_DEVICE(name)                                                           \
  Device* device = nullptr;                                                          \
  if (rsmi_status_t checked = check(dv_ind, name, &device); checked != RSMI_STATUS_SUCCESS) \
  return checked

// Work runs at this moment: the latest modelled end of the work started so
// far lies ahead (the engine adds each operation as it starts).
bool running(const simgpu::BusyClock& clock) { return clock.busy_until_ns.load() > now_ns(); }
bool kernels_running(const Device* device) { return device->file != nullptr && running(device->file->kernels); }

uint64_t used_bytes(const Device* device) {
  if (device->file == nullptr) return 0;
  uint64_t used = 0;
  for (const auto& slot : device->file->slots)
    if (process_alive(slot.pid.load())) used += slot.used_bytes.load();
  return used;
}

uint64_t total_bytes(const Device* device) {
  const uint64_t total = device->file != nullptr ? device->file->total_bytes.load() : 0;
  return total != 0 ? total : device->default_total_bytes;
}

}  // namespace

extern "C" {

rsmi_status_t rsmi_init(uint64_t) {
  const std::string forced = env("SIMGPU_ROCM_SMI_INIT_ERROR");
  if (!forced.empty()) return rsmi_status_t(std::strtoul(forced.c_str(), nullptr, 0));
  std::lock_guard lock(g_mutex);
  if (g_init_count++ > 0) return RSMI_STATUS_SUCCESS;
  g_unsupported = env("SIMGPU_ROCM_SMI_UNSUPPORTED");
  g_permission = env("SIMGPU_ROCM_SMI_PERMISSION");
  if (!g_devices.empty()) return RSMI_STATUS_SUCCESS;
  const std::string count_text = env("SIMGPU_DEVICE_COUNT");
  const int count = count_text.empty() ? 2 : std::atoi(count_text.c_str());
  const std::string memory_text = env("SIMGPU_DEVICE_MEMORY_MIB");
  const uint64_t memory_mib = memory_text.empty() ? 16384 : std::strtoull(memory_text.c_str(), nullptr, 10);
  const std::string links = env("SIMGPU_ROCM_SMI_PCIE_LINK");
  for (int i = 0; i < count; ++i) {
    Device device;
    device.index = uint32_t(i);
    device.file = map_state(uint32_t(i));
    device.default_total_bytes = memory_mib << 20;
    unsigned gen = 0, width = 0;
    if (std::sscanf(per_device(links, uint32_t(i)).c_str(), "gen%ux%u", &gen, &width) == 2 && gen >= 1 &&
        gen <= 4) {
      device.link_gen = gen;
      device.link_width = width;
    }
    g_devices.push_back(device);
  }
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_shut_down(void) {
  std::lock_guard lock(g_mutex);
  if (g_init_count == 0) return RSMI_STATUS_INIT_ERROR;
  --g_init_count;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char** status_string) {
  if (status_string == nullptr) return RSMI_STATUS_INVALID_ARGS;
  // Each code's name, then a few words of our own.
  switch (status) {
    case RSMI_STATUS_SUCCESS: *status_string = "RSMI_STATUS_SUCCESS: success"; break;
    case RSMI_STATUS_INVALID_ARGS: *status_string = "RSMI_STATUS_INVALID_ARGS: invalid arguments"; break;
    case RSMI_STATUS_NOT_SUPPORTED: *status_string = "RSMI_STATUS_NOT_SUPPORTED: not supported on this device"; break;
    case RSMI_STATUS_PERMISSION: *status_string = "RSMI_STATUS_PERMISSION: permission denied"; break;
    case RSMI_STATUS_INIT_ERROR: *status_string = "RSMI_STATUS_INIT_ERROR: initialization failed"; break;
    case RSMI_STATUS_INSUFFICIENT_SIZE: *status_string = "RSMI_STATUS_INSUFFICIENT_SIZE: buffer too small"; break;
    default: *status_string = "RSMI_STATUS_UNKNOWN_ERROR: unknown error"; break;
  }
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t* num_devices) {
  std::lock_guard lock(g_mutex);
  if (g_init_count == 0) return RSMI_STATUS_INIT_ERROR;
  if (num_devices == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *num_devices = uint32_t(g_devices.size());
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char* name, size_t len) {
  RSMI_DEVICE("rsmi_dev_name_get");
  if (name == nullptr || len == 0) return RSMI_STATUS_INVALID_ARGS;
  std::string text = env("SIMGPU_HIP_DEVICE_NAME");
  if (text.empty()) text = "AMD Instinct MI210 (simulated)";
  std::snprintf(name, len, "%s", text.c_str());
  return text.size() >= len ? RSMI_STATUS_INSUFFICIENT_SIZE : RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_unique_id_get(uint32_t dv_ind, uint64_t* id) {
  RSMI_DEVICE("rsmi_dev_unique_id_get");
  if (id == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *id = simgpu::amd_unique_id(device->index);
  return RSMI_STATUS_SUCCESS;
}

// BDFID: domain [63:32], bus [15:8], device [7:3], function [2:0].
rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t* bdfid) {
  RSMI_DEVICE("rsmi_dev_pci_id_get");
  if (bdfid == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *bdfid = uint64_t(device->index + 1) << 8;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t* busy_percent) {
  RSMI_DEVICE("rsmi_dev_busy_percent_get");
  if (busy_percent == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *busy_percent = kernels_running(device) ? 100 : 0;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t dv_ind, uint32_t* busy_percent) {
  RSMI_DEVICE("rsmi_dev_memory_busy_percent_get");
  if (busy_percent == nullptr) return RSMI_STATUS_INVALID_ARGS;
  *busy_percent = device->file != nullptr && running(device->file->copies) ? 100 : 0;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t* total) {
  RSMI_DEVICE("rsmi_dev_memory_total_get");
  if (total == nullptr) return RSMI_STATUS_INVALID_ARGS;
  if (mem_type != RSMI_MEM_TYPE_VRAM && mem_type != RSMI_MEM_TYPE_VIS_VRAM) return RSMI_STATUS_NOT_SUPPORTED;
  *total = total_bytes(device);
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t* used) {
  RSMI_DEVICE("rsmi_dev_memory_usage_get");
  if (used == nullptr) return RSMI_STATUS_INVALID_ARGS;
  if (mem_type != RSMI_MEM_TYPE_VRAM && mem_type != RSMI_MEM_TYPE_VIS_VRAM) return RSMI_STATUS_NOT_SUPPORTED;
  const uint64_t bytes = used_bytes(device), total = total_bytes(device);
  *used = bytes < total ? bytes : total;
  return RSMI_STATUS_SUCCESS;
}

// The clock's levels in Hz and the one it runs at.
rsmi_status_t rsmi_dev_gpu_clk_freq_get(uint32_t dv_ind, rsmi_clk_type_t clk_type, rsmi_frequencies_t* f) {
  RSMI_DEVICE("rsmi_dev_gpu_clk_freq_get");
  if (f == nullptr) return RSMI_STATUS_INVALID_ARGS;
  std::memset(f, 0, sizeof *f);
  if (clk_type == RSMI_CLK_TYPE_SYS) {
    for (uint64_t mhz : kSysClocksMhz) f->frequency[f->num_supported++] = mhz * kMhz;
    f->current = kernels_running(device) ? f->num_supported - 1 : 0;
  } else if (clk_type == RSMI_CLK_TYPE_MEM) {
    for (uint64_t mhz : kMemClocksMhz) f->frequency[f->num_supported++] = mhz * kMhz;
    f->current = f->num_supported - 1;
  } else {
    return RSMI_STATUS_NOT_SUPPORTED;
  }
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* power) {
  RSMI_DEVICE("rsmi_dev_power_ave_get");
  if (power == nullptr) return RSMI_STATUS_INVALID_ARGS;
  if (sensor_ind != 0) return RSMI_STATUS_NOT_SUPPORTED;
  *power = kernels_running(device) ? kBusyPowerMicrowatts : kIdlePowerMicrowatts;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_cap_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t* cap) {
  RSMI_DEVICE("rsmi_dev_power_cap_get");
  if (cap == nullptr) return RSMI_STATUS_INVALID_ARGS;
  if (sensor_ind != 0) return RSMI_STATUS_NOT_SUPPORTED;
  *cap = kPowerCapMicrowatts;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv_ind, uint32_t sensor_type, rsmi_temperature_metric_t metric,
                                       int64_t* temperature) {
  RSMI_DEVICE("rsmi_dev_temp_metric_get");
  if (sensor_type > RSMI_TEMP_TYPE_MEMORY || metric != RSMI_TEMP_CURRENT) return RSMI_STATUS_NOT_SUPPORTED;
  if (temperature == nullptr) return RSMI_STATUS_INVALID_ARGS;
  const int64_t edge = kernels_running(device) ? kBusyEdgeMillidegrees : kIdleEdgeMillidegrees;
  *temperature = sensor_type == RSMI_TEMP_TYPE_EDGE ? edge : edge + 8'000;  // junction and memory run hotter
  return RSMI_STATUS_SUCCESS;
}

// Blocks for a second, as the real one (see the top of this file).
rsmi_status_t rsmi_dev_pci_throughput_get(uint32_t dv_ind, uint64_t* sent, uint64_t* received, uint64_t* max_pkt_sz) {
  RSMI_DEVICE("rsmi_dev_pci_throughput_get");
  const uint64_t sent_before = device->file != nullptr ? device->file->d2h_bytes.load() : 0;
  const uint64_t received_before = device->file != nullptr ? device->file->h2d_bytes.load() : 0;
  sleep(1);
  const uint64_t sent_bytes = device->file != nullptr ? device->file->d2h_bytes.load() - sent_before : 0;
  const uint64_t received_bytes = device->file != nullptr ? device->file->h2d_bytes.load() - received_before : 0;
  if (sent != nullptr) *sent = (sent_bytes + kMaxPayloadBytes - 1) / kMaxPayloadBytes;
  if (received != nullptr) *received = (received_bytes + kMaxPayloadBytes - 1) / kMaxPayloadBytes;
  if (max_pkt_sz != nullptr) *max_pkt_sz = kMaxPayloadBytes;
  return RSMI_STATUS_SUCCESS;
}

// The link's possible rates (T/s) with their lanes, and the current one.
rsmi_status_t rsmi_dev_pci_bandwidth_get(uint32_t dv_ind, rsmi_pcie_bandwidth_t* bandwidth) {
  RSMI_DEVICE("rsmi_dev_pci_bandwidth_get");
  if (bandwidth == nullptr) return RSMI_STATUS_INVALID_ARGS;
  std::memset(bandwidth, 0, sizeof *bandwidth);
  rsmi_frequencies_t& rates = bandwidth->transfer_rate;
  for (double rate : kTransferRates) {
    bandwidth->lanes[rates.num_supported] = 16;
    rates.frequency[rates.num_supported++] = uint64_t(rate);
  }
  rates.current = device->link_gen - 1;
  bandwidth->lanes[rates.current] = device->link_width;
  return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_ecc_count_get(uint32_t dv_ind, rsmi_gpu_block_t block, rsmi_error_count_t* ec) {
  RSMI_DEVICE("rsmi_dev_ecc_count_get");
  if (ec == nullptr) return RSMI_STATUS_INVALID_ARGS;
  if (block == RSMI_GPU_BLOCK_INVALID || block > RSMI_GPU_BLOCK_LAST) return RSMI_STATUS_NOT_SUPPORTED;
  ec->correctable_err = ec->uncorrectable_err = 0;  // the simulated memory never fails
  return RSMI_STATUS_SUCCESS;
}

// The SMU's metrics table (gpu_metrics v1.3 layout, as the 5.2 header has it).
rsmi_status_t rsmi_dev_gpu_metrics_info_get(uint32_t dv_ind, rsmi_gpu_metrics_t* metrics) {
  RSMI_DEVICE("rsmi_dev_gpu_metrics_info_get");
  if (metrics == nullptr) return RSMI_STATUS_INVALID_ARGS;
  std::memset(metrics, 0, sizeof *metrics);
  const bool busy = kernels_running(device);
  metrics->common_header.structure_size = uint16_t(sizeof *metrics);
  metrics->common_header.format_revision = 1;
  metrics->common_header.content_revision = RSMI_GPU_METRICS_API_CONTENT_VER_3;
  metrics->temperature_edge = uint16_t((busy ? kBusyEdgeMillidegrees : kIdleEdgeMillidegrees) / 1000);
  metrics->average_gfx_activity = busy ? 100 : 0;
  metrics->average_socket_power = uint16_t((busy ? kBusyPowerMicrowatts : kIdlePowerMicrowatts) / 1'000'000);
  metrics->system_clock_counter = uint64_t(now_ns());
  metrics->current_gfxclk = uint16_t(busy ? kSysClocksMhz[2] : kSysClocksMhz[0]);
  metrics->current_uclk = uint16_t(kMemClocksMhz[1]);
  const std::string throttle = per_device(env("SIMGPU_ROCM_SMI_THROTTLE"), device->index);
  metrics->throttle_status = busy && !throttle.empty() ? uint32_t(std::strtoul(throttle.c_str(), nullptr, 16)) : 0;
  metrics->pcie_link_width = uint16_t(device->link_width);
  metrics->pcie_link_speed = uint16_t(kTransferRates[device->link_gen - 1] / 1e8);  // 0.1 GT/s
  return RSMI_STATUS_SUCCESS;
}

}  // extern "C"
