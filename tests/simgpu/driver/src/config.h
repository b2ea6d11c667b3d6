// The simulated machine, read once from SIMGPU_* environment variables at cuInit.
// Each field sits next to its variable and default; README.md documents them.
#pragma once

#include <cstdint>
#include <string>

namespace simgpu {

struct DriverConfig {
  int device_count = 2;                        // SIMGPU_DEVICE_COUNT (0 -> cuInit fails with NO_DEVICE)
  uint64_t device_memory_bytes = 16ull << 30;  // SIMGPU_DEVICE_MEMORY_MIB
  // Host memory that can be pinned (cuMemAllocHost, cuMemHostAlloc,
  // cuMemHostRegister), all devices together. 0 until loaded: then the
  // machine's physical memory, as a real system cannot pin more than it has.
  uint64_t pinned_memory_bytes = 0;            // SIMGPU_PINNED_MEMORY_MIB
  int sm_count = 132;                          // SIMGPU_SM_COUNT
  std::string device_name = "Simulated GPU";   // SIMGPU_DEVICE_NAME
  int cc_major = 9;                            // SIMGPU_COMPUTE_CAPABILITY ("9.0")
  int cc_minor = 0;
  // Bandwidths in GB/s, which is the same number as bytes per nanosecond.
  double h2d_bytes_per_ns = 25.0;     // SIMGPU_H2D_GBPS
  double d2h_bytes_per_ns = 25.0;     // SIMGPU_D2H_GBPS
  double d2d_bytes_per_ns = 1000.0;   // SIMGPU_D2D_GBPS (also memset)
  double p2p_bytes_per_ns = 50.0;     // SIMGPU_P2P_GBPS
  int64_t copy_latency_ns = 2'000;    // SIMGPU_COPY_LATENCY_NS (copies and memsets)
  int64_t launch_latency_ns = 3'000;  // SIMGPU_LAUNCH_LATENCY_NS (submit -> earliest start)
  int64_t module_load_ns = 0;         // SIMGPU_MODULE_LOAD_NS (each module load, on the loading thread)
  // SIMGPU_EVENT_CLOCK_PPM: the device's event timer runs this many parts
  // per million faster (negative: slower) than the host's clock, as a real
  // GPU's timer drifts from CLOCK_MONOTONIC; elapsed times are scaled by it.
  int64_t event_clock_ppm = 0;
  bool lazy_loading = true;           // CUDA_MODULE_LOADING: LAZY (CUDA 12.2+'s default) or EAGER
  std::string kernel_costs;           // SIMGPU_KERNEL_COSTS, see kernel_cost.h
  // SIMGPU_FAULT_KERNELS: comma list; a kernel whose (mangled) name contains
  // one of them faults with an illegal address when it runs (a sticky error).
  std::string fault_kernels;
  bool ptx_jit_enabled = true;        // CUDA_DISABLE_PTX_JIT=1 disables (real driver knob)
};

// Fills `config` from the environment. On a malformed value returns false and
// sets `error` to a message naming the variable.
bool load_config_from_environment(DriverConfig& config, std::string& error);

}  // namespace simgpu
