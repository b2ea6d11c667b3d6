// Theoretical and estimated achieved occupancy of one kernel launch, from its
// launch shape, the function's resource use (FunctionDef) and the device's
// limits (DeviceInfo), by the rules of NVIDIA's CUDA Occupancy Calculator
// (the CUDA C++ Programming Guide's occupancy section states the same
// limits). tools/README.md writes the formula out.
#pragma once

#include <cstdint>
#include <optional>

#include "formats/records.h"

namespace proflaunch::tools::stats {

struct OccupancyInputs {
  // launch
  uint64_t grid_blocks = 0;
  uint32_t block_threads = 0;
  uint32_t dynamic_shared_bytes = 0;
  // function
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t max_threads_per_block = 0;  // the function's; 0: not known (no limit checked)
  // device
  uint32_t multiprocessor_count = 0;
  uint32_t max_threads_per_multiprocessor = 0;
  uint32_t max_blocks_per_multiprocessor = 0;
  uint32_t registers_per_multiprocessor = 0;
  uint32_t registers_per_block = 0;
  uint32_t shared_bytes_per_multiprocessor = 0;
  uint32_t shared_bytes_per_block_optin = 0;  // 0: not checked
  uint32_t reserved_shared_bytes_per_block = 0;
  uint32_t warp_size = 0;
  uint16_t compute_capability_major = 0;
  uint16_t compute_capability_minor = 0;
};

struct Occupancy {
  uint32_t active_blocks_per_sm;  // the calculator's limit: min of the four below
  uint32_t limit_by_warps;
  uint32_t limit_by_blocks;
  uint32_t limit_by_registers;  // UINT32_MAX when registers do not limit
  uint32_t limit_by_shared;     // UINT32_MAX when shared memory does not limit
  double theoretical;           // active warps / max warps per SM, 0..1
  double achieved_estimate;     // the same with blocks per SM capped by grid blocks / SMs, 0..1
};

// Fills the inputs from the records; nullopt when one the calculation needs
// is unknown (a first-version record, a failed query, a host function).
std::optional<OccupancyInputs> occupancy_inputs(const format::KernelLaunchRecord& launch,
                                                const format::FunctionDefRecord& function,
                                                const format::DeviceInfoRecord& device);

// nullopt when an input it needs is 0. A launch that cannot run (more threads
// or shared memory per block than allowed) has 0 active blocks.
std::optional<Occupancy> compute_occupancy(const OccupancyInputs& in);

}  // namespace proflaunch::tools::stats
