// ROCm SMI as the sampler reaches it: librocm_smi64.so.1 opened with dlopen
// (the launcher does not link it: a machine without it still runs), its
// entry points resolved by name. Declarations of the few types used, with
// the layouts and values of ROCm 5.2's rocm_smi.h (rocm_smi.h is not
// installed on most machines that build this; the simulated library's test,
// tests/simgpu/rocm_smi/tests, checks these against the real header).
#pragma once

#include <cstdint>
#include <string>

namespace proflaunch::launcher::gpu_metrics {

namespace rsmi {
using Status = uint32_t;  // rsmi_status_t
inline constexpr Status kSuccess = 0, kNotSupported = 2, kPermission = 4, kInitError = 8;
inline constexpr uint32_t kMemTypeVram = 0;                 // rsmi_memory_type_t
inline constexpr uint32_t kClkTypeSys = 0, kClkTypeMem = 4;  // rsmi_clk_type_t
inline constexpr uint32_t kTempTypeEdge = 0;                // rsmi_temperature_type_t
inline constexpr uint32_t kTempCurrent = 0;                 // rsmi_temperature_metric_t
inline constexpr uint64_t kGpuBlockUmc = 1;                 // rsmi_gpu_block_t (64 bits wide)
inline constexpr uint32_t kMaxNumFrequencies = 32;

struct Frequencies {  // rsmi_frequencies_t
  uint32_t num_supported;
  uint32_t current;
  uint64_t frequency[kMaxNumFrequencies];
};
struct PcieBandwidth {  // rsmi_pcie_bandwidth_t
  Frequencies transfer_rate;
  uint32_t lanes[kMaxNumFrequencies];
};
struct ErrorCount {  // rsmi_error_count_t
  uint64_t correctable_err, uncorrectable_err;
};
// rsmi_gpu_metrics_t: the firmware's metrics table, of which the sampler
// reads throttle_status; the rest is its size.
struct GpuMetrics {
  uint8_t before_throttle_status[68];
  uint32_t throttle_status;
  uint8_t after_throttle_status[24];
};
static_assert(sizeof(Frequencies) == 264 && sizeof(PcieBandwidth) == 392 && sizeof(GpuMetrics) == 96);
}  // namespace rsmi

struct RocmSmiLibrary {
  void* handle = nullptr;
  rsmi::Status (*init)(uint64_t) = nullptr;
  rsmi::Status (*shut_down)() = nullptr;
  rsmi::Status (*status_string)(rsmi::Status, const char**) = nullptr;
  rsmi::Status (*num_monitor_devices)(uint32_t*) = nullptr;
  rsmi::Status (*dev_name_get)(uint32_t, char*, size_t) = nullptr;
  rsmi::Status (*dev_unique_id_get)(uint32_t, uint64_t*) = nullptr;
  rsmi::Status (*dev_pci_id_get)(uint32_t, uint64_t*) = nullptr;
  rsmi::Status (*dev_busy_percent_get)(uint32_t, uint32_t*) = nullptr;
  rsmi::Status (*dev_memory_busy_percent_get)(uint32_t, uint32_t*) = nullptr;
  rsmi::Status (*dev_memory_total_get)(uint32_t, uint32_t, uint64_t*) = nullptr;
  rsmi::Status (*dev_memory_usage_get)(uint32_t, uint32_t, uint64_t*) = nullptr;
  rsmi::Status (*dev_gpu_clk_freq_get)(uint32_t, uint32_t, rsmi::Frequencies*) = nullptr;
  rsmi::Status (*dev_power_ave_get)(uint32_t, uint32_t, uint64_t*) = nullptr;
  rsmi::Status (*dev_power_cap_get)(uint32_t, uint32_t, uint64_t*) = nullptr;
  rsmi::Status (*dev_temp_metric_get)(uint32_t, uint32_t, uint32_t, int64_t*) = nullptr;
  rsmi::Status (*dev_pci_bandwidth_get)(uint32_t, rsmi::PcieBandwidth*) = nullptr;
  rsmi::Status (*dev_ecc_count_get)(uint32_t, uint64_t, rsmi::ErrorCount*) = nullptr;
  rsmi::Status (*dev_gpu_metrics_info_get)(uint32_t, rsmi::GpuMetrics*) = nullptr;

  // dlopen + rsmi_init. False with `why` ("librocm_smi64.so.1: cannot open
  // shared object file...", "rsmi_init failed: RSMI_STATUS_INIT_ERROR ...").
  bool open(std::string* why);
  void close();
  std::string error_text(rsmi::Status result) const;
};

}  // namespace proflaunch::launcher::gpu_metrics
