#include "tools/proftrace/stats/amd_occupancy.h"

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace proflaunch::tools::stats {
namespace {

constexpr uint32_t kSimdsPerCu = 4;
constexpr uint32_t kLdsGranuleBytes = 512;  // 128 dwords, GFX7 and later (AMDGPUUsage, COMPUTE_PGM_RSRC2)
constexpr uint32_t kUnlimited = std::numeric_limits<uint32_t>::max();

uint64_t round_up(uint64_t value, uint64_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

// Sources (facts, see docs/amd.md): LLVM's AMDGPU backend
// (AMDGPUBaseInfo: getMaxWavesPerEU, getTotalNumVGPRs, getVGPRAllocGranule;
// GCNSubtarget::getOccupancyWithNumSGPRs; the processor features in
// AMDGPU.td), AMD's CDNA2/CDNA3 ISA guides and Instinct tuning guides (4
// SIMDs and 64 KiB of LDS per CU), and AMD's RDNA whitepaper and ISA guides
// (a CU has 2 SIMD32s; two CUs pair into a WGP with 128 KiB of LDS).
std::optional<AmdArchLimits> amd_arch_limits(std::string_view target, uint32_t wave_size) {
  using Agprs = AmdArchLimits::Agprs;
  const std::string_view processor = target.substr(0, target.find(':'));
  auto is_one_of = [&](std::initializer_list<std::string_view> names) {
    for (std::string_view name : names)
      if (processor == name) return true;
    return false;
  };
  const bool wave32 = wave_size == 32;
  // CDNA2 (gfx90a, MI200) and CDNA3 (gfx940-gfx942, MI300): one 512-entry
  // file per lane for VGPRs and AGPRs, allocated in blocks of 8, 8 waves.
  if (is_one_of({"gfx90a", "gfx940", "gfx941", "gfx942"}))
    return wave32 ? std::nullopt : std::optional(AmdArchLimits{kSimdsPerCu, 8, 512, 8, true, Agprs::kUnified});
  // GCN5 (Vega: gfx900, gfx902, gfx904, gfx906, gfx909, gfx90c) and CDNA1
  // (gfx908, MI100; its AGPRs a separate file of 256): 256 VGPRs in blocks
  // of 4, 10 waves.
  if (is_one_of({"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}))
    return wave32 ? std::nullopt : std::optional(AmdArchLimits{kSimdsPerCu, 10, 256, 4, true, Agprs::kNone});
  if (processor == "gfx908")
    return wave32 ? std::nullopt : std::optional(AmdArchLimits{kSimdsPerCu, 10, 256, 4, true, Agprs::kSeparate});
  if (wave_size != 32 && wave_size != 64) return std::nullopt;
  // RDNA: 2 SIMD32s per CU; a wave64 takes one wave slot and twice the
  // registers (half the register count per lane). SGPRs are not a limit.
  constexpr uint32_t kRdnaSimdsPerCu = 2;
  // RDNA1 (gfx10.1): 20 waves per SIMD, 1024 VGPRs (wave32) in blocks of 8.
  if (is_one_of({"gfx1010", "gfx1011", "gfx1012", "gfx1013"}))
    return AmdArchLimits{kRdnaSimdsPerCu, 20, wave32 ? 1024u : 512u, wave32 ? 8u : 4u, false, Agprs::kNone};
  // RDNA2 (gfx10.3) and RDNA3 without the larger file: 16 waves, blocks of 16.
  if (is_one_of({"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036", "gfx1102", "gfx1103",
                 "gfx1150"}))
    return AmdArchLimits{kRdnaSimdsPerCu, 16, wave32 ? 1024u : 512u, wave32 ? 16u : 8u, false, Agprs::kNone};
  // RDNA3 with 1.5x the VGPRs (gfx1100, gfx1101, gfx1151): blocks of 24.
  if (is_one_of({"gfx1100", "gfx1101", "gfx1151"}))
    return AmdArchLimits{kRdnaSimdsPerCu, 16, wave32 ? 1536u : 768u, wave32 ? 24u : 12u, false, Agprs::kNone};
  return std::nullopt;
}

namespace {

// Waves a SIMD holds with this many SGPRs per wave on gfx9 (800 per SIMD;
// LLVM's GCNSubtarget::getOccupancyWithNumSGPRs for VOLCANIC_ISLANDS and
// later: the allocation granule makes the steps uneven).
uint32_t waves_by_sgprs(uint32_t sgprs) {
  if (sgprs <= 80) return 10;
  if (sgprs <= 88) return 9;
  if (sgprs <= 100) return 8;
  return 7;
}

// A wave's VGPRs in the file that limits it: on gfx90a/gfx94x the AGPRs
// follow the VGPRs (rounded to 4) in the one file; on gfx908 they are a file
// of their own, as large, so the larger count limits.
uint64_t vgprs_allocated(const AmdOccupancyInputs& in) {
  uint64_t used = in.vgprs_per_thread;
  if (in.agprs_per_thread > 0) {
    if (in.arch.agprs == AmdArchLimits::Agprs::kUnified) used = round_up(used, 4) + in.agprs_per_thread;
    else if (in.arch.agprs == AmdArchLimits::Agprs::kSeparate) used = std::max<uint64_t>(used, in.agprs_per_thread);
  }
  return used == 0 ? 0 : round_up(used, in.arch.vgpr_granule);
}

}  // namespace

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
  const uint32_t simds = in.arch.simds_per_cu != 0 ? in.arch.simds_per_cu : kSimdsPerCu;
  const uint32_t max_waves_per_cu = simds * in.arch.max_waves_per_simd;
  const uint32_t waves_per_block = (in.block_threads + in.wave_size - 1) / in.wave_size;
  o.limit_by_warps = max_waves_per_cu / waves_per_block;
  o.limit_by_blocks = kUnlimited;

  // Registers: the waves a SIMD's vector file (and, on gfx9, its scalar
  // file) holds, spread over the CU's SIMDs.
  o.limit_by_registers = kUnlimited;
  uint64_t waves_per_simd = in.arch.max_waves_per_simd;
  bool registers_limit = false;
  if (const uint64_t per_wave = vgprs_allocated(in); per_wave > 0) {
    waves_per_simd = std::min<uint64_t>(waves_per_simd, in.arch.vgprs_per_simd_lane / per_wave);
    registers_limit = true;
  }
  if (in.arch.sgprs_limit && in.sgprs_per_wave > 0) {
    waves_per_simd = std::min<uint64_t>(waves_per_simd, waves_by_sgprs(in.sgprs_per_wave));
    registers_limit = true;
  }
  if (registers_limit) o.limit_by_registers = static_cast<uint32_t>(simds * waves_per_simd / waves_per_block);

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
  const auto arch = amd_arch_limits(amd_target_in_name(device_name), device.warp_size);
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
