#include "tools/proftrace/stats/occupancy.h"

#include <algorithm>
#include <limits>

namespace proflaunch::tools::stats {
namespace {

constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

uint64_t round_up(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

// The calculator's allocation constants, which the driver does not report.
// Registers are allocated per warp in units of 256; warps get registers in
// groups of 4 (one per SM sub-partition) from compute capability 3.0 on, 2 on
// 6.0. Shared memory is allocated in units of 128 bytes from 8.0 on, 256 before.
constexpr uint32_t kRegisterAllocationUnit = 256;
uint32_t warp_allocation_granularity(uint16_t major, uint16_t minor) { return major == 6 && minor == 0 ? 2 : 4; }
uint32_t shared_allocation_unit(uint16_t major) { return major >= 8 ? 128 : 256; }

}  // namespace

std::optional<OccupancyInputs> occupancy_inputs(const format::KernelLaunchRecord& launch,
                                                const format::FunctionDefRecord& function,
                                                const format::DeviceInfoRecord& device) {
  constexpr uint32_t kNeeded = format::kFunctionRegisters | format::kFunctionStaticShared;
  if ((function.attributes_known & kNeeded) != kNeeded) return std::nullopt;
  OccupancyInputs in;
  in.grid_blocks = uint64_t{launch.grid.x} * launch.grid.y * launch.grid.z;
  in.block_threads = launch.block.x * launch.block.y * launch.block.z;
  in.dynamic_shared_bytes = launch.dynamic_shared_bytes;
  in.registers_per_thread = function.registers_per_thread;
  in.static_shared_bytes = function.static_shared_bytes;
  if (function.attributes_known & format::kFunctionMaxThreadsPerBlock)
    in.max_threads_per_block = function.max_threads_per_block;
  in.multiprocessor_count = device.multiprocessor_count;
  in.max_threads_per_multiprocessor = device.max_threads_per_multiprocessor;
  in.max_blocks_per_multiprocessor = device.max_blocks_per_multiprocessor;
  in.registers_per_multiprocessor = device.registers_per_multiprocessor;
  in.registers_per_block = device.registers_per_block;
  in.shared_bytes_per_multiprocessor = device.shared_bytes_per_multiprocessor;
  in.shared_bytes_per_block_optin = device.shared_bytes_per_block_optin;
  in.reserved_shared_bytes_per_block = device.reserved_shared_bytes_per_block;
  in.warp_size = device.warp_size;
  in.compute_capability_major = device.compute_capability_major;
  in.compute_capability_minor = device.compute_capability_minor;
  return in;
}

std::optional<Occupancy> compute_occupancy(const OccupancyInputs& in) {
  if (in.block_threads == 0 || in.grid_blocks == 0 || in.multiprocessor_count == 0 || in.warp_size == 0 ||
      in.max_threads_per_multiprocessor < in.warp_size || in.max_blocks_per_multiprocessor == 0 ||
      in.registers_per_multiprocessor == 0 || in.shared_bytes_per_multiprocessor == 0 ||
      in.compute_capability_major == 0)
    return std::nullopt;
  Occupancy o{};
  const uint32_t max_warps_per_sm = in.max_threads_per_multiprocessor / in.warp_size;
  const uint32_t warps_per_block = (in.block_threads + in.warp_size - 1) / in.warp_size;
  o.limit_by_warps = max_warps_per_sm / warps_per_block;
  o.limit_by_blocks = in.max_blocks_per_multiprocessor;

  o.limit_by_registers = kUnlimited;
  if (in.registers_per_thread > 0) {
    const uint64_t registers_per_warp = round_up(uint64_t{in.registers_per_thread} * in.warp_size,
                                                 kRegisterAllocationUnit);
    const uint32_t granularity = warp_allocation_granularity(in.compute_capability_major, in.compute_capability_minor);
    // Warps the SM's register file holds, in whole allocation groups.
    const uint64_t warps = in.registers_per_multiprocessor / registers_per_warp / granularity * granularity;
    const bool block_fits = in.registers_per_block == 0 ||
                            registers_per_warp * warps_per_block <= in.registers_per_block;
    o.limit_by_registers = block_fits ? static_cast<uint32_t>(warps / warps_per_block) : 0;
  }

  o.limit_by_shared = kUnlimited;
  const uint64_t requested_shared = uint64_t{in.static_shared_bytes} + in.dynamic_shared_bytes;
  if (in.shared_bytes_per_block_optin != 0 && requested_shared > in.shared_bytes_per_block_optin) {
    o.limit_by_shared = 0;
  } else {
    const uint64_t per_block = round_up(requested_shared + in.reserved_shared_bytes_per_block,
                                        shared_allocation_unit(in.compute_capability_major));
    if (per_block > 0) o.limit_by_shared = static_cast<uint32_t>(in.shared_bytes_per_multiprocessor / per_block);
  }

  const bool too_many_threads = in.max_threads_per_block != 0 && in.block_threads > in.max_threads_per_block;
  o.active_blocks_per_sm =
      too_many_threads ? 0 : std::min({o.limit_by_warps, o.limit_by_blocks, o.limit_by_registers, o.limit_by_shared});
  const double warps_fraction = double(warps_per_block) / double(max_warps_per_sm);
  o.theoretical = o.active_blocks_per_sm * warps_fraction;
  // A grid smaller than the device cannot fill every SM's slots: as the
  // PyTorch profiler estimates achieved occupancy, the blocks an SM runs are
  // at most the grid's blocks per SM.
  const double grid_blocks_per_sm = double(in.grid_blocks) / double(in.multiprocessor_count);
  o.achieved_estimate = std::min<double>(o.active_blocks_per_sm, grid_blocks_per_sm) * warps_fraction;
  return o;
}

}  // namespace proflaunch::tools::stats
