// Theoretical and estimated achieved occupancy of a kernel launch on an AMD
// GPU, by AMD's rules for GCN5/CDNA (gfx9) and RDNA (gfx10, gfx11)
// (docs/amd.md, "Kernel resources and occupancy", gives the rules and their
// sources): per compute unit (CU) 4 SIMDs on gfx9, 2 on RDNA; a SIMD holds
// at most max_waves_per_simd waves, and as many as its vector register file
// (and, on gfx9, its scalar one) allows; a workgroup's waves stay on one CU
// and share its LDS.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tools/proftrace/stats/occupancy.h"

namespace proflaunch::tools::stats {

// What the target's hardware does not report: its per-SIMD limits.
struct AmdArchLimits {
  uint32_t simds_per_cu;
  uint32_t max_waves_per_simd;
  uint32_t vgprs_per_simd_lane;  // the register file each lane of a SIMD has, for this wave size
  uint32_t vgpr_granule;         // a wave's VGPRs are allocated in blocks of this many
  bool sgprs_limit;              // gfx9: a SIMD's 800 SGPRs limit its waves (not on RDNA)
  enum class Agprs : uint8_t { kNone, kSeparate, kUnified } agprs = Agprs::kNone;
};

// The limits of a target ("gfx90a", "gfx90a:sramecc+:xnack-", "gfx1100")
// for waves of `wave_size` work-items (RDNA runs wave32 or wave64; gfx9
// only wave64); nullopt for a target the table does not cover.
std::optional<AmdArchLimits> amd_arch_limits(std::string_view target, uint32_t wave_size = 64);

// The AMD target in a device name as the shim records it ("AMD Instinct
// MI210 gfx90a:sramecc+:xnack-": the last word that starts with "gfx").
std::string_view amd_target_in_name(std::string_view device_name);

struct AmdOccupancyInputs {
  uint64_t grid_blocks = 0;
  uint32_t block_threads = 0;
  uint32_t dynamic_lds_bytes = 0;
  uint32_t vgprs_per_thread = 0;          // hipFuncGetAttributes numRegs (the code object's .vgpr_count)
  uint32_t agprs_per_thread = 0;          // the code object's .agpr_count (gfx908, gfx90a, gfx94x); 0: none or unknown
  uint32_t sgprs_per_wave = 0;            // the code object's .sgpr_count (VCC, FLAT_SCRATCH, XNACK included); 0: unknown
  uint32_t static_lds_bytes = 0;          // sharedSizeBytes (.group_segment_fixed_size)
  uint32_t max_threads_per_block = 0;     // the kernel's (.max_flat_workgroup_size); 0: not checked
  uint32_t compute_units = 0;
  uint32_t lds_bytes_per_cu = 0;
  uint32_t wave_size = 0;
  AmdArchLimits arch{};
};

// nullopt when an input it needs is 0. limit_by_blocks is UINT32_MAX (a
// workgroup count limit is not modelled).
std::optional<Occupancy> compute_amd_occupancy(const AmdOccupancyInputs& in);

// Either vendor's occupancy for a launch: the CUDA calculator's rules for an
// NVIDIA device, these for an AMD one (its target read from its name).
std::optional<Occupancy> launch_occupancy(const format::KernelLaunchRecord& launch,
                                          const format::FunctionDefRecord& function,
                                          const format::DeviceInfoRecord& device, std::string_view device_name);

}  // namespace proflaunch::tools::stats
