#include "tools/proftrace/stats/amd_occupancy.h"

#include <algorithm>
#include <limits>

namespace proflaunch::tools::stats {
namespace {

constexpr uint32_t kSimdsPerCu = 4;
constexpr uint32_t kLdsGranuleBytes = 512;  // 128 dwords, GFX7 and later (AMDGPUUsage, COMPUTE_PGM_RSRC2)
constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

uint64_t round_up(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

std::optional<AmdArchLimits> amd_arch_limits(std::string_view target) {
  const std::string_view processor = target.substr(0, target.find(':'));
  // CDNA2 (gfx90a, MI200) and CDNA3 (gfx940-gfx942, MI300): one 512-entry
  // file per lane for VGPRs and AGPRs, allocated in blocks of 8, 8 waves.
  if (processor == "gfx90a" || processor == "gfx940" || processor == "gfx941" || processor == "gfx942")
    return AmdArchLimits{8, 512, 8};
  // GCN5 (Vega: gfx900, gfx902, gfx904, gfx906, gfx909, gfx90c) and CDNA1
  // (gfx908, MI100; its AGPRs are a separate file): 256 VGPRs in blocks of 4, 10 waves.
  if (processor == "gfx900" || processor == "gfx902" || processor == "gfx904" || processor == "gfx906" ||
      processor == "gfx908" || processor == "gfx909" || processor == "gfx90c")
    return AmdArchLimits{10, 256, 4};
  return std::nullopt;
}

std::string_view amd_target_in_name(std::string_view name) {
  size_t end = name.size();
  while (end > 0) {
    const size_t space = name.rfind(' ', end - 1);
    const size_t start = space == std::string_view::npos ? 0 : space + 1;
    const std::string_view word = name.substr(start, end - start);
    if (word.substr(0, 3) == "gfx") return word;
    if (space == std::string_view::npos) break;
    end = space;
  }
  return {};
}

std::optional<Occupancy> compute_amd_occupancy(const AmdOccupancyInputs& in) {
  if (in.block_threads == 0 || in.grid_blocks == 0 || in.compute_units == 0 || in.wave_size == 0 ||
      in.lds_bytes_per_cu == 0 || in.arch.max_waves_per_simd == 0 || in.arch.vgpr_granule == 0)
    return std::nullopt;
  Occupancy o{};
  const uint32_t max_waves_per_cu = kSimdsPerCu * in.arch.max_waves_per_simd;
  const uint32_t waves_per_block = (in.block_threads + in.wave_size - 1) / in.wave_size;
  o.limit_by_warps = max_waves_per_cu / waves_per_block;
  o.limit_by_blocks = kUnlimited;

  o.limit_by_registers = kUnlimited;
  if (in.vgprs_per_thread > 0) {
    const uint64_t per_wave = round_up(in.vgprs_per_thread, in.arch.vgpr_granule);
    const uint64_t waves_per_simd = std::min<uint64_t>(in.arch.max_waves_per_simd, in.arch.vgprs_per_simd_lane / per_wave);
    o.limit_by_registers = static_cast<uint32_t>(kSimdsPerCu * waves_per_simd / waves_per_block);
  }

  o.limit_by_shared = kUnlimited;
  const uint64_t lds = uint64_t{in.static_lds_bytes} + in.dynamic_lds_bytes;
  if (lds > in.lds_bytes_per_cu) o.limit_by_shared = 0;
  else if (lds > 0) o.limit_by_shared = static_cast<uint32_t>(in.lds_bytes_per_cu / round_up(lds, kLdsGranuleBytes));

  const bool too_many_threads = in.max_threads_per_block != 0 && in.block_threads > in.max_threads_per_block;
  o.active_blocks_per_sm =
      too_many_threads ? 0 : std::min({o.limit_by_warps, o.limit_by_registers, o.limit_by_shared});
  const double waves_fraction = double(waves_per_block) / double(max_waves_per_cu);
  o.theoretical = o.active_blocks_per_sm * waves_fraction;
  const double grid_blocks_per_cu = double(in.grid_blocks) / double(in.compute_units);
  o.achieved_estimate = std::min<double>(o.active_blocks_per_sm, grid_blocks_per_cu) * waves_fraction;
  return o;
}

std::optional<Occupancy> launch_occupancy(const format::KernelLaunchRecord& launch,
                                          const format::FunctionDefRecord& function,
                                          const format::DeviceInfoRecord& device, std::string_view device_name) {
  if (device.vendor != static_cast<uint8_t>(format::Vendor::kAmd)) {
    auto inputs = occupancy_inputs(launch, function, device);
    return inputs ? compute_occupancy(*inputs) : std::nullopt;
  }
  constexpr uint32_t kNeeded = format::kFunctionRegisters | format::kFunctionStaticShared;
  if ((function.attributes_known & kNeeded) != kNeeded) return std::nullopt;
  const auto arch = amd_arch_limits(amd_target_in_name(device_name));
  if (!arch) return std::nullopt;
  AmdOccupancyInputs in;
  in.grid_blocks = uint64_t{launch.grid.x} * launch.grid.y * launch.grid.z;
  in.block_threads = launch.block.x * launch.block.y * launch.block.z;
  in.dynamic_lds_bytes = launch.dynamic_shared_bytes;
  in.vgprs_per_thread = function.registers_per_thread;
  in.static_lds_bytes = function.static_shared_bytes;
  if (function.attributes_known & format::kFunctionMaxThreadsPerBlock)
    in.max_threads_per_block = function.max_threads_per_block;
  in.compute_units = device.multiprocessor_count;
  in.lds_bytes_per_cu = device.shared_bytes_per_multiprocessor;
  in.wave_size = device.warp_size;
  in.arch = *arch;
  return compute_amd_occupancy(in);
}

}  // namespace proflaunch::tools::stats
