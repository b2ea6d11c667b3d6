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

// L2: an H100's 50 MiB. The set-aside for persisting accesses may be at most
// three quarters of it (A100 reports 30 of 40 MiB; the same ratio is assumed
// for H100, not read from one), an access policy window at most 128 MiB less
// 4 KiB (A100's and H100's accessPolicyMaxWindowSize).
constexpr int kL2CacheBytes = 50 * 1024 * 1024;
constexpr int kMaxPersistingL2Bytes = kL2CacheBytes / 4 * 3;
constexpr int kMaxAccessPolicyWindowBytes = 128 * 1024 * 1024 - 4096;

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

// The most dynamic shared memory a block may use so that `blocks` blocks of
// `block_threads` threads fit on one SM at once (0 when they do not fit
// whatever it uses).
inline size_t available_dynamic_shared_bytes(const CUfunc_st& function, int blocks, int block_threads) {
  if (blocks <= 0 || active_blocks_per_sm(function, block_threads, 0) < blocks) return 0;
  const size_t per_block = kSharedBytesPerSm / size_t(blocks);
  if (per_block <= function.info.static_shared_bytes) return 0;
  return std::min<size_t>(per_block - function.info.static_shared_bytes,
                          size_t(kSharedBytesPerBlockOptin) - std::min<size_t>(function.info.static_shared_bytes,
                                                                               kSharedBytesPerBlockOptin));
}

// An access policy window as cuda.h documents its fields: a size the device
// allows, a hit ratio in [0, 1], properties from CUaccessProperty, and a miss
// property that is not "persisting" (cuda.h: "Must be either NORMAL or
// STREAMING").
inline bool valid_access_policy_window(const CUaccessPolicyWindow& window) {
  auto known = [](CUaccessProperty p) {
    return p == CU_ACCESS_PROPERTY_NORMAL || p == CU_ACCESS_PROPERTY_STREAMING || p == CU_ACCESS_PROPERTY_PERSISTING;
  };
  return window.num_bytes <= size_t(kMaxAccessPolicyWindowBytes) && window.hitRatio >= 0.0f &&
         window.hitRatio <= 1.0f && known(window.hitProp) && known(window.missProp) &&
         window.missProp != CU_ACCESS_PROPERTY_PERSISTING;
}

}  // namespace simgpu
