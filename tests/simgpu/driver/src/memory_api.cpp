// cuMemAlloc and friends: device, managed, pinned and registered host memory.
#include <algorithm>

#include "capture.h"
#include "api_guard.h"
#include "context.h"
#include "driver_state.h"
#include "memory.h"
#include "mempool.h"

namespace simgpu {

CUresult allocate_registered(MemoryRange range, Device* device, CUdeviceptr& address) {
  const size_t charged_bytes = round_up(range.bytes, kAllocationGranularityBytes);
  if (device && !device->reserve_bytes(charged_bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
  void* backing = map_backing_memory(range.bytes);
  if (!backing) {
    if (device) device->release_bytes(charged_bytes);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  range.base = reinterpret_cast<uintptr_t>(backing);
  range.buffer_id = state().new_id();
  state().memory.insert(range);
  address = range.base;
  return CUDA_SUCCESS;
}

void release_backing(const MemoryRange& range) {
  unmap_backing_memory(reinterpret_cast<void*>(range.base), range.bytes);
  if (range.kind == MemoryKind::kPinnedHost) state().release_pinned_bytes(range.bytes);
  if (range.kind == MemoryKind::kDevice) {
    if (Device* device = find_device(range.device)) {
      device->release_bytes(round_up(range.bytes, kAllocationGranularityBytes));
    }
  }
}

void free_memory_of_context(CUctx_st* context) {
  auto owned = state().memory.erase_all([&](const MemoryRange& range) {
    return range.context == context &&
           (range.kind == MemoryKind::kDevice || range.kind == MemoryKind::kManaged ||
            range.kind == MemoryKind::kPinnedHost || range.kind == MemoryKind::kRegisteredHost);
  });
  for (const MemoryRange& range : owned) {
    if (range.kind != MemoryKind::kRegisteredHost) release_backing(range);
    else state().release_pinned_bytes(range.bytes);
  }
}

CUresult find_device_accessible(CUdeviceptr address, size_t bytes, MemoryRange& range) {
  auto found = state().memory.find_covering(address, bytes);
  if (!found) return CUDA_ERROR_INVALID_VALUE;
  if (found->kind == MemoryKind::kVmmMapping && found->access != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  range = *found;
  return CUDA_SUCCESS;
}

HostMemory classify_host_pointer(const void* pointer) {
  auto found = state().memory.find(reinterpret_cast<uintptr_t>(pointer));
  return found && is_host_memory(found->kind) ? HostMemory::kPinned : HostMemory::kPageable;
}

}  // namespace simgpu

using namespace simgpu;

namespace {

CUresult allocate_device(CUdeviceptr* dptr, size_t bytesize, MemoryKind kind, unsigned flags) {
  if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* context = nullptr;
  if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
  MemoryRange range;
  range.bytes = bytesize;
  range.kind = kind;
  range.device = context->device->ordinal;
  range.context = context;
  range.host_flags = flags;
  // Managed memory is not charged: like Linux on Pascal and newer, managed
  // allocations may oversubscribe the device.
  Device* charged = kind == MemoryKind::kDevice ? context->device : nullptr;
  return allocate_registered(range, charged, *dptr);
}

CUresult allocate_pinned(void** pp, size_t bytesize, unsigned flags) {
  if (!pp || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  CUctx_st* context = nullptr;
  if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
  MemoryRange range;
  range.bytes = bytesize;
  range.kind = MemoryKind::kPinnedHost;
  range.device = context->device->ordinal;
  range.context = context;
  range.host_flags = flags;
  // Pinned memory cannot be swapped out: more than the host can pin fails.
  if (!state().reserve_pinned_bytes(bytesize)) return CUDA_ERROR_OUT_OF_MEMORY;
  CUdeviceptr address = 0;
  CUresult result = allocate_registered(range, nullptr, address);
  if (result == CUDA_SUCCESS) *pp = reinterpret_cast<void*>(address);
  else state().release_pinned_bytes(bytesize);
  return result;
}

// Frees like the real cuMemFree: waits for the device's outstanding work first
// (so no queued copy can touch freed memory), then returns the memory.
CUresult free_device(CUdeviceptr dptr) {
  if (dptr == 0) return CUDA_SUCCESS;
  auto found = state().memory.find(dptr);
  if (!found || found->base != dptr) return CUDA_ERROR_INVALID_VALUE;
  if (found->kind == MemoryKind::kPoolBlock) return free_pool_block_now(dptr);
  if (found->kind != MemoryKind::kDevice && found->kind != MemoryKind::kManaged) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  synchronize_device(find_device(found->device));
  auto erased = state().memory.erase(dptr, [](const MemoryRange& range) {
    return range.kind == MemoryKind::kDevice || range.kind == MemoryKind::kManaged;
  });
  if (!erased) return CUDA_ERROR_INVALID_VALUE;  // freed concurrently by another thread
  release_backing(*erased);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return api_call([&] {
    // cuMemAlloc may synchronize: potentially unsafe during a capture.
    if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
    return allocate_device(dptr, bytesize, MemoryKind::kDevice, 0);
  });
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes) {
  return api_call([&] {
    if (!pPitch || WidthInBytes == 0 || Height == 0) return CUDA_ERROR_INVALID_VALUE;
    if (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    size_t pitch = round_up(WidthInBytes, kAllocationGranularityBytes);
    CUresult result = allocate_device(dptr, pitch * Height, MemoryKind::kDevice, 0);
    if (result == CUDA_SUCCESS) *pPitch = pitch;
    return result;
  });
}

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  return api_call([&] {
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) return CUDA_ERROR_INVALID_VALUE;
    return allocate_device(dptr, bytesize, MemoryKind::kManaged, flags);
  });
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
  return api_call([&] {
    if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
    return free_device(dptr);
  });
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t* free, size_t* total) {
  return api_call([&] {
    if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    Device* device = context->device;
    *total = device->total_bytes;
    *free = device->total_bytes - std::min(device->total_bytes, device->used_bytes.load());
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemGetInfo(unsigned int* free, unsigned int* total) {
  size_t free_bytes = 0, total_bytes = 0;
  CUresult result = cuMemGetInfo_v2(&free_bytes, &total_bytes);
  if (result == CUDA_SUCCESS) {
    *free = unsigned(std::min<size_t>(free_bytes, 0xffffffffu));
    *total = unsigned(std::min<size_t>(total_bytes, 0xffffffffu));
  }
  return result;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
  return api_call([&] {
    auto found = state().memory.find(dptr);
    if (!found) return CUDA_ERROR_NOT_FOUND;
    if (pbase) *pbase = found->base;
    if (psize) *psize = found->bytes;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemAllocHost_v2(void** pp, size_t bytesize) {
  return api_call([&] { return allocate_pinned(pp, bytesize, 0); });
}
CUresult CUDAAPI cuMemAllocHost(void** pp, unsigned int bytesize) { return cuMemAllocHost_v2(pp, bytesize); }

CUresult CUDAAPI cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
  return api_call([&] { return allocate_pinned(pp, bytesize, Flags); });
}

CUresult CUDAAPI cuMemFreeHost(void* p) {
  return api_call([&] {
    auto found = state().memory.find(reinterpret_cast<uintptr_t>(p));
    if (!found || found->base != reinterpret_cast<uintptr_t>(p) || found->kind != MemoryKind::kPinnedHost) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    synchronize_device(nullptr);
    auto erased = state().memory.erase(found->base,
                                       [](const MemoryRange& range) { return range.kind == MemoryKind::kPinnedHost; });
    if (!erased) return CUDA_ERROR_INVALID_VALUE;
    release_backing(*erased);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
  return api_call([&] {
    constexpr unsigned kValid = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (!p || bytesize == 0 || (Flags & ~kValid)) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    MemoryRange range;
    range.base = reinterpret_cast<uintptr_t>(p);
    range.bytes = bytesize;
    range.kind = MemoryKind::kRegisteredHost;
    range.device = context->device->ordinal;
    range.context = context;
    range.host_flags = Flags;
    range.buffer_id = state().new_id();
    if (!state().reserve_pinned_bytes(bytesize)) return CUDA_ERROR_OUT_OF_MEMORY;
    if (!state().memory.insert(range)) {
      state().release_pinned_bytes(bytesize);
      return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
  return cuMemHostRegister_v2(p, bytesize, Flags);
}

CUresult CUDAAPI cuMemHostUnregister(void* p) {
  return api_call([&] {
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    auto found = state().memory.find(reinterpret_cast<uintptr_t>(p));
    if (!found || found->base != reinterpret_cast<uintptr_t>(p) || found->kind != MemoryKind::kRegisteredHost) {
      return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    synchronize_device(nullptr);
    auto erased = state().memory.erase(
        found->base, [](const MemoryRange& range) { return range.kind == MemoryKind::kRegisteredHost; });
    if (!erased) return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    state().release_pinned_bytes(erased->bytes);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
  return api_call([&] {
    if (!pdptr || Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    auto found = state().memory.find(reinterpret_cast<uintptr_t>(p));
    if (!found || !is_host_memory(found->kind)) return CUDA_ERROR_INVALID_VALUE;
    *pdptr = reinterpret_cast<CUdeviceptr>(p);  // unified addressing: the same value
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemHostGetFlags(unsigned int* pFlags, void* p) {
  return api_call([&] {
    if (!pFlags) return CUDA_ERROR_INVALID_VALUE;
    auto found = state().memory.find(reinterpret_cast<uintptr_t>(p));
    if (!found || !is_host_memory(found->kind)) return CUDA_ERROR_INVALID_VALUE;
    *pFlags = found->host_flags;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
