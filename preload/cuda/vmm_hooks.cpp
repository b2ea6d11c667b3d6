// Virtual memory management, what PyTorch's expandable segments and other
// growing allocators use: physical memory (cuMemCreate, cuMemRelease),
// address space (cuMemAddressReserve, cuMemAddressFree), and the mappings
// between them (cuMemMap, cuMemUnmap, cuMemSetAccess). Physical memory is
// device memory the process holds; a mapping is where the program can use
// it. The tools pair each map with its physical handle (from cuMemCreate).
#include <cuda.h>

#include <algorithm>

#include "preload/cuda/hook_registry.h"
#include "preload/cuda/memory_recording.h"

namespace proflaunch::cuda {
namespace {

using format::AllocationKind;
using format::MemoryAction;

void* real_cuMemCreate;
void* real_cuMemRelease;
void* real_cuMemAddressReserve;
void* real_cuMemAddressFree;
void* real_cuMemMap;
void* real_cuMemUnmap;
void* real_cuMemSetAccess;

// The device whose memory cuMemCreate makes, from its properties (not the
// current context: a program may create memory for any device).
int32_t device_of(const CUmemAllocationProp* prop) {
  if (prop == nullptr || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return -1;
  return prop->location.id;
}

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                       const CUmemAllocationProp* prop, unsigned long long flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemCreate, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemCreate, AllocationKind::kPhysical, MemoryAction::kAcquire, 0, nothing_before,
                       [&] { return real(handle, size, prop, flags); }, [&](CUresult result) {
                         MemoryShape shape;
                         shape.bytes = size;
                         shape.handle = result == CUDA_SUCCESS && handle != nullptr ? *handle : 0;
                         shape.device = device_of(prop);
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemRelease, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemRelease, AllocationKind::kPhysical, MemoryAction::kRelease, 0, nothing_before,
                       [&] { return real(handle); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.handle = handle;
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                               unsigned long long flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemAddressReserve, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemAddressReserve, AllocationKind::kAddressRange, MemoryAction::kAcquire, 0,
                       nothing_before, [&] { return real(ptr, size, alignment, addr, flags); },
                       [&](CUresult result) {
                         MemoryShape shape;
                         shape.address = output_address(result, ptr);
                         shape.bytes = size;
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemAddressFree, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemAddressFree, AllocationKind::kAddressRange, MemoryAction::kRelease, 0,
                       nothing_before, [&] { return real(ptr, size); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = ptr;
                         shape.bytes = size;
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                                    CUmemGenericAllocationHandle handle, unsigned long long flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemMap, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemMap, AllocationKind::kMapping, MemoryAction::kAcquire, 0, nothing_before,
                       [&] { return real(ptr, size, offset, handle, flags); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = ptr;
                         shape.bytes = size;
                         shape.handle = handle;
                         shape.pitch_or_offset_bytes = offset;
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemUnmap, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemUnmap, AllocationKind::kMapping, MemoryAction::kRelease, 0, nothing_before,
                       [&] { return real(ptr, size); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = ptr;
                         shape.bytes = size;
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc,
                                          size_t count) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemSetAccess, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemSetAccess, AllocationKind::kMapping, MemoryAction::kSetAccess, 0,
                       nothing_before, [&] { return real(ptr, size, desc, count); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = ptr;
                         shape.bytes = size;
                         // The widest access granted to any device.
                         for (size_t i = 0; desc != nullptr && i < count; ++i)
                           shape.flags = std::max<uint32_t>(shape.flags, desc[i].flags);
                         return shape;
                       });
}

}  // extern "C"

namespace proflaunch::cuda {

HookFamily vmm_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuMemCreate, "cuMemCreate", 10020, false, kDriverLibrary, real_cuMemCreate),
      PROFLAUNCH_HOOK(cuMemRelease, "cuMemRelease", 10020, false, kDriverLibrary, real_cuMemRelease),
      PROFLAUNCH_HOOK(cuMemAddressReserve, "cuMemAddressReserve", 10020, false, kDriverLibrary, real_cuMemAddressReserve),
      PROFLAUNCH_HOOK(cuMemAddressFree, "cuMemAddressFree", 10020, false, kDriverLibrary, real_cuMemAddressFree),
      PROFLAUNCH_HOOK(cuMemMap, "cuMemMap", 10020, false, kDriverLibrary, real_cuMemMap),
      PROFLAUNCH_HOOK(cuMemUnmap, "cuMemUnmap", 10020, false, kDriverLibrary, real_cuMemUnmap),
      PROFLAUNCH_HOOK(cuMemSetAccess, "cuMemSetAccess", 10020, false, kDriverLibrary, real_cuMemSetAccess),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
