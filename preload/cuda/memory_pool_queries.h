// What the pool hooks ask the driver about stream-ordered memory: which pool
// an address came from, and how much device memory a pool holds. A pool
// reserves memory behind the application's back (and gives it back at
// synchronizations), so its reserved size can only be read from the driver;
// the hooks record it after every pool call. Calls go to the real driver
// functions, never through the shim's hooks.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace proflaunch::cuda {

// The pool `address` was allocated from, or nullptr (not a pool allocation,
// or the driver cannot say).
CUmemoryPool pool_of_address(CUdeviceptr address) noexcept;

// The current pool of `device` (what cuMemAllocAsync allocates from), or nullptr.
CUmemoryPool current_pool_of_device(int device) noexcept;

// CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT of `pool`, or format::kPoolReservedUnknown.
uint64_t pool_reserved_bytes(CUmemoryPool pool) noexcept;

}  // namespace proflaunch::cuda
