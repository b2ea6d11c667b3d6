// AMD occupancy rules (tools/proftrace/stats/amd_occupancy.h) on cases worked
// out by hand, each limited by a different resource, on an MI210-like device:
// gfx90a, 104 CUs, 64 KiB LDS per CU, wave64 (8 waves per SIMD, 512 VGPRs
// per lane in blocks of 8), and on gfx908 (10 waves, 256 VGPRs in blocks of 4);
// SGPR and AGPR limits on gfx9, and RDNA's rules (2 SIMD32s per CU, wave32
// and wave64 register files).
#include <gtest/gtest.h>

#include "tools/proftrace/stats/amd_occupancy.h"

namespace proflaunch::tools::stats {
namespace {

AmdOccupancyInputs mi210(uint32_t block_threads, uint32_t vgprs, uint32_t static_lds = 0,
                         uint64_t grid_blocks = 104 * 100) {
  AmdOccupancyInputs in;
  in.grid_blocks = grid_blocks;
  in.block_threads = block_threads;
  in.vgprs_per_thread = vgprs;
  in.static_lds_bytes = static_lds;
  in.max_threads_per_block = 1024;
  in.compute_units = 104;
  in.lds_bytes_per_cu = 64 * 1024;
  in.wave_size = 64;
  in.arch = *amd_arch_limits("gfx90a:sramecc+:xnack-");
  return in;
}

TEST(AmdOccupancy, ArchTable) {
  ASSERT_TRUE(amd_arch_limits("gfx90a"));
  EXPECT_EQ(amd_arch_limits("gfx90a")->max_waves_per_simd, 8u);
  EXPECT_EQ(amd_arch_limits("gfx90a")->vgprs_per_simd_lane, 512u);
  EXPECT_EQ(amd_arch_limits("gfx908:xnack-")->max_waves_per_simd, 10u);
  EXPECT_EQ(amd_arch_limits("gfx908")->vgprs_per_simd_lane, 256u);
  EXPECT_FALSE(amd_arch_limits("gfx90a", 32));  // CDNA runs wave64 only
  ASSERT_TRUE(amd_arch_limits("gfx1030", 32));
  EXPECT_EQ(amd_arch_limits("gfx1030", 32)->simds_per_cu, 2u);
  EXPECT_EQ(amd_arch_limits("gfx1010", 32)->max_waves_per_simd, 20u);
  EXPECT_EQ(amd_arch_limits("gfx1100", 64)->vgprs_per_simd_lane, 768u);
  EXPECT_FALSE(amd_arch_limits("gfx1200", 32));  // not in the table
  EXPECT_EQ(amd_target_in_name("AMD Instinct MI210 (simulated) gfx90a:sramecc+:xnack-"), "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(amd_target_in_name("Simulated GPU"), "");
}

TEST(AmdOccupancy, WavesLimit) {
  // 256 work-items = 4 waves; 16 VGPRs do not limit (512 / 16 = 32 > 8):
  // 4 SIMDs x 8 waves = 32 waves per CU = 8 workgroups, full occupancy.
  const auto o = compute_amd_occupancy(mi210(256, 16));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_warps, 8u);
  EXPECT_EQ(o->active_blocks_per_sm, 8u);
  EXPECT_DOUBLE_EQ(o->theoretical, 1.0);
}

TEST(AmdOccupancy, VgprLimitWithGranule) {
  // 100 VGPRs are allocated as 104 (blocks of 8): 512 / 104 = 4 waves per
  // SIMD, 16 per CU = 4 workgroups of 4 waves: 16 of 32 waves.
  const auto o = compute_amd_occupancy(mi210(256, 100));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 4u);
  EXPECT_EQ(o->active_blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
  // Without the rounding 512 / 100 would be 5 waves per SIMD.
}

TEST(AmdOccupancy, Gfx908HasTenWavesAndHalfTheVgprs) {
  AmdOccupancyInputs in = mi210(64, 24);
  in.arch = *amd_arch_limits("gfx908");
  // 256 / 24 = 10 waves per SIMD (the cap): 40 one-wave workgroups.
  auto o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 40u);
  EXPECT_DOUBLE_EQ(o->theoretical, 1.0);
  // 65 VGPRs, as 68 in blocks of 4: 256 / 68 = 3 waves per SIMD: 12 of 40.
  in.vgprs_per_thread = 65;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 12u);
  EXPECT_DOUBLE_EQ(o->theoretical, 12.0 / 40.0);
}

TEST(AmdOccupancy, LdsLimit) {
  // 16 KiB of LDS per workgroup: 64 KiB / 16 KiB = 4 workgroups of 4 waves.
  auto o = compute_amd_occupancy(mi210(256, 8, 16 * 1024));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_shared, 4u);
  EXPECT_EQ(o->active_blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
  // 10,000 bytes take 10,240 (blocks of 512): 6 workgroups, not 6.55.
  o = compute_amd_occupancy(mi210(64, 8, 10000));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_shared, 6u);
  // More than the CU has: none.
  o = compute_amd_occupancy(mi210(64, 8, 65 * 1024));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 0u);
}

TEST(AmdOccupancy, SmallGridAndLaunchBounds) {
  // 52 workgroups on 104 CUs: half a workgroup of 4 waves per CU = 2 of 32 waves.
  auto o = compute_amd_occupancy(mi210(256, 16, 0, 52));
  ASSERT_TRUE(o);
  EXPECT_DOUBLE_EQ(o->achieved_estimate, 0.5 * 4 / 32);
  AmdOccupancyInputs in = mi210(512, 16);
  in.max_threads_per_block = 256;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 0u);
}

TEST(AmdOccupancy, SgprsLimitGfx9Waves) {
  // gfx908, one-wave workgroups, 24 VGPRs (10 waves by VGPRs): 96 SGPRs
  // per wave leave 8 waves per SIMD (800 SGPRs, the <= 100 step), 32 per CU
  // of 40.
  AmdOccupancyInputs in = mi210(64, 24);
  in.arch = *amd_arch_limits("gfx908");
  in.sgprs_per_wave = 96;
  auto o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 32u);
  EXPECT_DOUBLE_EQ(o->theoretical, 32.0 / 40.0);
  // 102 SGPRs (the most a wave addresses): 7 waves per SIMD, 28 of 40.
  in.sgprs_per_wave = 102;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 28u);
  // 80 or fewer: no limit below 10.
  in.sgprs_per_wave = 80;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 40u);
  // On gfx90a the cap is 8 waves: 96 SGPRs (8 waves) do not lower it.
  AmdOccupancyInputs a = mi210(64, 16);
  a.sgprs_per_wave = 96;
  o = compute_amd_occupancy(a);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 32u);
}

TEST(AmdOccupancy, AgprsShareGfx90aFileButNotGfx908s) {
  // gfx90a: 62 VGPRs rounded to 64, + 64 AGPRs = 128, a multiple of 8:
  // 512 / 128 = 4 waves per SIMD, 16 per CU: 16 one-wave workgroups of 32.
  AmdOccupancyInputs in = mi210(64, 62);
  in.agprs_per_thread = 64;
  auto o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 16u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
  // Without the AGPRs: 62 as 64, 512 / 64 = 8 waves: 32 of 32.
  in.agprs_per_thread = 0;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 32u);
  // gfx908: a separate AGPR file of 256: 62 VGPRs (as 64) and 100 AGPRs
  // (as 100): the larger limits, 256 / 100 = 2 waves per SIMD, 8 of 40.
  in.arch = *amd_arch_limits("gfx908");
  in.agprs_per_thread = 100;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 8u);
}

// An RX 7900 XTX-like device: gfx1100, 96 CUs, 64 KiB LDS per CU, wave32.
AmdOccupancyInputs rdna3(uint32_t block_threads, uint32_t vgprs, uint32_t wave_size = 32) {
  AmdOccupancyInputs in;
  in.grid_blocks = 96 * 100;
  in.block_threads = block_threads;
  in.vgprs_per_thread = vgprs;
  in.max_threads_per_block = 1024;
  in.compute_units = 96;
  in.lds_bytes_per_cu = 64 * 1024;
  in.wave_size = wave_size;
  in.arch = *amd_arch_limits("gfx1100", wave_size);
  return in;
}

TEST(AmdOccupancy, RdnaWave32) {
  // 256 work-items = 8 wave32s; 2 SIMDs x 16 waves = 32 wave slots per CU:
  // 4 workgroups. 32 VGPRs take 48 (blocks of 24): 1536 / 48 = 32 > 16
  // waves: no register limit below the cap.
  auto o = compute_amd_occupancy(rdna3(256, 32));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_warps, 4u);
  EXPECT_EQ(o->limit_by_registers, 4u);
  EXPECT_DOUBLE_EQ(o->theoretical, 1.0);
  // 128 VGPRs, as 144 in blocks of 24: 1536 / 144 = 10 waves per SIMD, 20
  // per CU = 2 workgroups of 8 waves = 16 of 32 waves.
  o = compute_amd_occupancy(rdna3(256, 128));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 2u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
  // SGPRs never limit on RDNA.
  AmdOccupancyInputs in = rdna3(256, 32);
  in.sgprs_per_wave = 106;
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 4u);
}

TEST(AmdOccupancy, RdnaWave64HalvesTheRegisters) {
  // wave64 on gfx1100: 768 VGPRs per lane in blocks of 12. 256 work-items
  // = 4 waves; 128 VGPRs as 132: 768 / 132 = 5 waves per SIMD, 10 per CU =
  // 2 workgroups = 8 of 32 wave slots.
  auto o = compute_amd_occupancy(rdna3(256, 128, 64));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 2u);
  EXPECT_DOUBLE_EQ(o->theoretical, 8.0 / 32.0);
  // RDNA2 (gfx1030) wave32: 1024 in blocks of 16; 100 VGPRs as 112: 1024 /
  // 112 = 9 waves per SIMD, 18 per CU: 18 one-wave workgroups of 32.
  AmdOccupancyInputs in = rdna3(32, 100);
  in.arch = *amd_arch_limits("gfx1030", 32);
  o = compute_amd_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 18u);
  EXPECT_DOUBLE_EQ(o->theoretical, 18.0 / 32.0);
}

TEST(AmdOccupancy, LaunchOccupancyUsesAmdRulesForAmdDevices) {
  format::KernelLaunchRecord launch{};
  launch.grid = {1040, 1, 1};
  launch.block = {256, 1, 1};
  format::FunctionDefRecord function{};
  function.registers_per_thread = 3;
  function.static_shared_bytes = 16384;
  function.attributes_known = format::kFunctionRegisters | format::kFunctionStaticShared;
  format::DeviceInfoRecord device{};
  device.vendor = static_cast<uint8_t>(format::Vendor::kAmd);
  device.multiprocessor_count = 104;
  device.shared_bytes_per_multiprocessor = 64 * 1024;
  device.warp_size = 64;
  const auto o = launch_occupancy(launch, function, device, "AMD Instinct MI210 gfx90a:sramecc+:xnack-");
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(o->achieved_estimate, 0.5);
  // An RDNA device's wave size picks its register file: gfx1030 wave32, 2
  // SIMDs x 16 = 32 slots; 256 work-items = 8 waves; 3 VGPRs do not limit;
  // 16 KiB of LDS: 4 workgroups = 32 waves, all of them.
  device.warp_size = 32;
  const auto rdna = launch_occupancy(launch, function, device, "AMD Radeon RX 6800 gfx1030");
  ASSERT_TRUE(rdna);
  EXPECT_EQ(rdna->active_blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(rdna->theoretical, 1.0);
  EXPECT_FALSE(launch_occupancy(launch, function, device, "AMD Radeon gfx1200"));
}

}  // namespace
}  // namespace proflaunch::tools::stats
