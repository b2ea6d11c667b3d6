// Per-block and per-SM limits of the simulated device (H100-like), shared by
// the launch checks, cuFuncGetAttribute and the occupancy calculator.
#pragma once

#include <algorithm>

#include "module.h"

namespace simgpu {

constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxThreadsPerSm = 2048;
constexpr int kMaxBlocksPerSm = 32;
constexpr int kRegistersPerSm = 64 * 1024;
constexpr int kSharedBytesPerSm = 228 * 1024;
constexpr int kSharedBytesPerBlockOptin = 227 * 1024;

// Threads per block the kernel can be launched with: __launch_bounds__ and
// its register count limit it below the device's 1024.
inline int max_threads_per_block(const CUfunc_st& function) {
  int limit = kMaxThreadsPerBlock;
  if (function.info.max_threads_per_block) limit = std::min<int>(limit, int(function.info.max_threads_per_block));
  if (function.info.registers) limit = std::min(limit, kRegistersPerSm / int(function.info.registers) / 32 * 32);
  return std::max(limit, 32);
}

// Blocks of `block_threads` threads that fit on one SM at once.
inline int active_blocks_per_sm(const CUfunc_st& function, int block_threads, size_t dynamic_shared_bytes) {
  if (block_threads <= 0 || block_threads > max_threads_per_block(function)) return 0;
  int blocks = std::min(kMaxBlocksPerSm, kMaxThreadsPerSm / block_threads);
  if (function.info.registers) {
    blocks = std::min(blocks, kRegistersPerSm / (int(function.info.registers) * block_threads));
  }
  const size_t shared = function.info.static_shared_bytes + dynamic_shared_bytes;
  if (shared) blocks = std::min<int>(blocks, int(kSharedBytesPerSm / shared));
  return std::max(blocks, 0);
}

}  // namespace simgpu
