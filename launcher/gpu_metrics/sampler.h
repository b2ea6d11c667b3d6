// The device sampler: a thread of the launcher that reads each device's
// metrics through NVML (NVIDIA) and ROCm SMI (AMD) at --gpu-metrics Hz while the program runs and writes
// them as a part of their own, ~gpu-metrics-<launcher pid>.part, which the
// join puts into the trace like any process's part (formats/README.md,
// "Device metrics"). README.md says why the launcher samples, not the shim.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "launcher/gpu_metrics/device_source.h"

namespace proflaunch::launcher::gpu_metrics {

struct SamplerOptions {
  double hz = 10;
  std::string parts_dir;
  // CUDA_VISIBLE_DEVICES as the program gets it (null: unset): which of
  // NVML's devices the program can see.
  const char* cuda_visible_devices = nullptr;
  // ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES (null: unset): which of
  // ROCm SMI's devices it can see (with CUDA_VISIBLE_DEVICES, which HIP
  // honours when HIP_VISIBLE_DEVICES is unset).
  const char* rocr_visible_devices = nullptr;
  const char* hip_visible_devices = nullptr;
  // One line for the user (no NVML, nothing to sample, ...).
  std::function<void(const std::string&)> say;
  bool verbose = false;  // also name each metric left out and why
};

struct SamplerCounts {
  uint64_t devices = 0;
  uint64_t samples = 0;   // records written
  uint64_t ticks = 0;     // times every device was read
  uint64_t cpu_ns = 0;    // the sampling thread's CPU time
};

class Sampler {
 public:
  Sampler();
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Opens NVML and ROCm SMI (either may be missing) and starts the thread. False (and nothing runs) when there is
  // nothing to sample; the reason was said.
  bool start(const SamplerOptions& options);
  // Takes a last sample, writes the part out and ends the thread.
  SamplerCounts stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::thread thread_;
};

// Which of NVML's devices (by index, UUID text "GPU-...") CUDA_VISIBLE_DEVICES
// leaves visible, in the order the program numbers them. Integers are NVML
// indices (right when CUDA_DEVICE_ORDER=PCI_BUS_ID, and on machines of
// identical GPUs); UUIDs, whole or a unique prefix, match NVML's UUIDs; the
// list ends at the first entry that matches nothing, as in the driver.
// Unset: every device.
std::vector<int> visible_devices(const char* cuda_visible_devices, const std::vector<std::string>& uuids);

// Which of ROCm SMI's devices (by index, UUID text "GPU-<16 hex>") a HIP
// program sees, in its order: ROCr applies ROCR_VISIBLE_DEVICES to the
// machine's devices, then HIP applies HIP_VISIBLE_DEVICES (unset:
// CUDA_VISIBLE_DEVICES) to what is left (ROCm's GPU isolation
// documentation). Entries are indices into the list they apply to, or
// UUIDs, whole or a prefix (the first device whose UUID starts so, as
// ROCclr); each list ends at the first entry that matches nothing. Integers
// are ROCm SMI indices: right where ROCm SMI and ROCr enumerate alike (one
// kind of GPU; not verified on a real machine).
std::vector<int> amd_visible_devices(const AmdVisibility& visibility, const std::vector<std::string>& uuids);

}  // namespace proflaunch::launcher::gpu_metrics
