// The occupancy calculator (tools/proftrace/stats/occupancy.h) on cases worked
// out by hand with the CUDA Occupancy Calculator's rules, each limited by a
// different resource, on an H100-like device: 132 SMs, 2048 threads, 32
// blocks, 64 Ki registers and 228 KiB shared memory per SM (227 KiB per
// block opted in, 1 KiB reserved per block), warp size 32, compute 9.0.
#include <gtest/gtest.h>

#include "tools/proftrace/stats/occupancy.h"

namespace proflaunch::tools::stats {
namespace {

OccupancyInputs h100(uint32_t block_threads, uint32_t registers, uint32_t static_shared = 0,
                     uint64_t grid_blocks = 132 * 100) {
  OccupancyInputs in;
  in.grid_blocks = grid_blocks;
  in.block_threads = block_threads;
  in.registers_per_thread = registers;
  in.static_shared_bytes = static_shared;
  in.max_threads_per_block = 1024;
  in.multiprocessor_count = 132;
  in.max_threads_per_multiprocessor = 2048;
  in.max_blocks_per_multiprocessor = 32;
  in.registers_per_multiprocessor = 65536;
  in.registers_per_block = 65536;
  in.shared_bytes_per_multiprocessor = 228 * 1024;
  in.shared_bytes_per_block_optin = 227 * 1024;
  in.reserved_shared_bytes_per_block = 1024;
  in.warp_size = 32;
  in.compute_capability_major = 9;
  return in;
}

TEST(Occupancy, RegistersLimit) {
  // 256 threads = 8 warps; 64 registers x 32 = 2048 per warp; 65536 / 2048 =
  // 32 warps = 4 blocks (threads alone would allow 8): 32 of 64 warps.
  const auto o = compute_occupancy(h100(256, 64));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 4u);
  EXPECT_EQ(o->limit_by_warps, 8u);
  EXPECT_EQ(o->active_blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
  EXPECT_DOUBLE_EQ(o->achieved_estimate, 0.5);
}

TEST(Occupancy, RegisterAllocationGranularity) {
  // 37 registers x 32 = 1184, allocated as 1280 per warp; 65536 / 1280 = 51
  // warps, in groups of 4: 48; 128 threads = 4 warps: 12 blocks, 48 of 64
  // warps. Without the rounding it would be 65536 / (37 x 128) = 13 blocks.
  const auto o = compute_occupancy(h100(128, 37));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 12u);
  EXPECT_EQ(o->active_blocks_per_sm, 12u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.75);
}

TEST(Occupancy, SharedMemoryLimits) {
  // 48 KiB static + 1 KiB reserved = 50176 bytes per block (a multiple of
  // 128); 233472 / 50176 = 4 blocks of 4 warps (registers would allow 16).
  const auto o = compute_occupancy(h100(128, 32, 48 * 1024));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_shared, 4u);
  EXPECT_EQ(o->limit_by_registers, 16u);
  EXPECT_EQ(o->active_blocks_per_sm, 4u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.25);
}

TEST(Occupancy, DynamicSharedMemoryCountsWithStatic) {
  // 30000 + 20000 + 1024 reserved = 51024, allocated as 51072 (128-byte
  // units): 233472 / 51072 = 4 blocks.
  OccupancyInputs in = h100(64, 16, 30000);
  in.dynamic_shared_bytes = 20000;
  const auto o = compute_occupancy(in);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_shared, 4u);
  EXPECT_DOUBLE_EQ(o->theoretical, 4.0 * 2 / 64);
}

TEST(Occupancy, BlockCountLimits) {
  // One warp per block: threads allow 64 blocks, registers (16 x 32 = 512
  // per warp) 128, shared memory (1 KiB reserved each) 228; the SM runs at
  // most 32 blocks: 32 of 64 warps.
  const auto o = compute_occupancy(h100(32, 16));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_blocks, 32u);
  EXPECT_EQ(o->limit_by_warps, 64u);
  EXPECT_EQ(o->active_blocks_per_sm, 32u);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
}

TEST(Occupancy, ThreadsLimitAndPartialWarpsCountWhole) {
  // 97 threads take 4 warps; 16 such blocks fill 64 warps.
  const auto o = compute_occupancy(h100(97, 0));
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_warps, 16u);
  EXPECT_EQ(o->active_blocks_per_sm, 16u);
  EXPECT_DOUBLE_EQ(o->theoretical, 1.0);
}

TEST(Occupancy, SmallGridCapsTheAchievedEstimate) {
  // The block-count case with 66 blocks on 132 SMs: half a block per SM.
  const auto o = compute_occupancy(h100(32, 16, 0, 66));
  ASSERT_TRUE(o);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
  EXPECT_DOUBLE_EQ(o->achieved_estimate, 0.5 / 64);
}

TEST(Occupancy, LaunchesThatCannotRunHaveNone) {
  OccupancyInputs too_much_shared = h100(128, 32, 200 * 1024);
  too_much_shared.dynamic_shared_bytes = 40 * 1024;  // 240 KiB > 227 KiB
  ASSERT_TRUE(compute_occupancy(too_much_shared));
  EXPECT_EQ(compute_occupancy(too_much_shared)->active_blocks_per_sm, 0u);
  OccupancyInputs too_many_threads = h100(1024, 32);
  too_many_threads.max_threads_per_block = 512;  // __launch_bounds__(512)
  EXPECT_DOUBLE_EQ(compute_occupancy(too_many_threads)->theoretical, 0.0);
  // 255 registers x 32 = 8160 -> 8192 per warp x 32 warps > 65536 per block.
  EXPECT_EQ(compute_occupancy(h100(1024, 255))->active_blocks_per_sm, 0u);
}

TEST(Occupancy, MissingInputsGiveNoAnswer) {
  for (auto clear : {+[](OccupancyInputs& in) { in.warp_size = 0; },
                     +[](OccupancyInputs& in) { in.max_threads_per_multiprocessor = 0; },
                     +[](OccupancyInputs& in) { in.registers_per_multiprocessor = 0; },
                     +[](OccupancyInputs& in) { in.shared_bytes_per_multiprocessor = 0; },
                     +[](OccupancyInputs& in) { in.multiprocessor_count = 0; },
                     +[](OccupancyInputs& in) { in.compute_capability_major = 0; }}) {
    OccupancyInputs in = h100(256, 64);
    clear(in);
    EXPECT_FALSE(compute_occupancy(in));
  }
}

TEST(Occupancy, InputsNeedTheFunctionsKnownResources) {
  format::KernelLaunchRecord launch{};
  launch.grid = {132, 1, 1};
  launch.block = {256, 1, 1};
  format::FunctionDefRecord function{};
  function.registers_per_thread = 64;
  format::DeviceInfoRecord device{};
  function.attributes_known = format::kFunctionRegisters;  // static shared unknown
  EXPECT_FALSE(occupancy_inputs(launch, function, device));
  function.attributes_known = format::kFunctionRegisters | format::kFunctionStaticShared;
  const auto in = occupancy_inputs(launch, function, device);
  ASSERT_TRUE(in);
  EXPECT_EQ(in->block_threads, 256u);
  EXPECT_EQ(in->grid_blocks, 132u);
  EXPECT_EQ(in->registers_per_thread, 64u);
  EXPECT_EQ(in->max_threads_per_block, 0u) << "not known: not checked";
  EXPECT_FALSE(compute_occupancy(*in)) << "a first-version DeviceInfo has no limits";
}

}  // namespace
}  // namespace proflaunch::tools::stats
