// Allocation helpers shared by the memory, pool, VMM, module and copy code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "cuda_api.h"
#include "memory_registry.h"

namespace simgpu {

struct Device;

// cuMemAlloc rounds sizes up to this; accounting uses the rounded size.
constexpr size_t kAllocationGranularityBytes = 512;

inline size_t round_up(size_t value, size_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// Maps backing memory, charges `device` (nullptr: no device memory is used, as
// for pinned host memory) and registers the range. OUT_OF_MEMORY beyond the
// configured device memory.
CUresult allocate_registered(MemoryRange range, Device* device, CUdeviceptr& address);

// Unmaps a range made by allocate_registered and refunds its device memory.
void release_backing(const MemoryRange& range);

// Frees every allocation owned by `context` (used when it is destroyed or reset).
void free_memory_of_context(CUctx_st* context);

// The device-accessible range covering [address, address + bytes), or
// CUDA_ERROR_INVALID_VALUE. Pinned/registered host memory counts (unified
// addressing); VMM ranges count only where cuMemSetAccess allowed access.
CUresult find_device_accessible(CUdeviceptr address, size_t bytes, MemoryRange& range);

// How a host pointer is backed, for the copy timing and synchronization rules.
enum class HostMemory { kPageable, kPinned };
HostMemory classify_host_pointer(const void* pointer);

}  // namespace simgpu
