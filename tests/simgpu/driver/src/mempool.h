// Stream-ordered allocation (cuMemAllocAsync, cuMemFreeAsync) and memory pools.
//
// Accounting: a pool *reserves* device memory for each block it hands out; the
// reservation counts toward the device's used memory (cuMemGetInfo) until the
// pool releases it. A block freed with cuMemFreeAsync goes back to the pool when
// its stream reaches the free, and is reused for later allocations of the same
// rounded size. Memory held beyond the pool's release threshold (default 0) is
// released at the next stream/event/context synchronization or cuMemPoolTrimTo,
// as the CUDA docs describe. An allocation that does not fit first makes its
// pool release all unused blocks, then fails with CUDA_ERROR_OUT_OF_MEMORY.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "cuda_api.h"

namespace simgpu {
struct Device;
}

struct CUmemPoolHandle_st {
  simgpu::Device* device = nullptr;
  bool is_default = false;
  std::mutex mutex;
  bool destroyed = false;
  uint64_t release_threshold_bytes = 0;
  uint64_t reserved_bytes = 0;
  uint64_t reserved_high_bytes = 0;
  uint64_t used_bytes = 0;
  uint64_t used_high_bytes = 0;
  int reuse_follow_event_dependencies = 1;
  int reuse_allow_opportunistic = 1;
  int reuse_allow_internal_dependencies = 1;
  std::multimap<size_t, uintptr_t> unused_blocks;  // block bytes -> base
};

namespace simgpu {

void create_default_pool(Device& device);

// A block of `bytes` from `pool`, mapped now (cuMemAllocAsync, graph
// mem-alloc nodes).
CUresult allocate_from_pool(CUmemPoolHandle_st& pool, size_t bytes, CUdeviceptr& address);

// cuMemFree of a pool block: returns it to its pool at once (documented: no
// implicit synchronization for stream-ordered allocations).
CUresult free_pool_block_now(CUdeviceptr address);

// Releases memory that pools hold beyond their release thresholds; called at
// every synchronization point.
void trim_pools_after_synchronize();

}  // namespace simgpu
