// Device, managed and pinned host memory: cuMemAlloc_v2, cuMemAllocPitch_v2,
// cuMemAllocManaged, cuMemFree_v2, cuMemAllocHost_v2, cuMemHostAlloc,
// cuMemFreeHost, cuMemHostRegister(_v2), cuMemHostUnregister, and
// cuMemGetInfo_v2. The CUDA 2.x variants with 32-bit sizes (cuMemAlloc,
// cuMemAllocHost, ...) are legacy entry points the shim passes through.
// The runtime's cudaMalloc family reaches these through cuGetProcAddress.
#include <cuda.h>

#include "preload/cuda/hook_registry.h"
#include "preload/cuda/memory_recording.h"

namespace proflaunch::cuda {
namespace {

using format::AllocationKind;
using format::MemoryAction;

// cuda.h renames cuMemHostRegister to its _v2; the shim defines both ABI
// variants (CUDA 4.0 and 6.5), so the id is taken before the name goes.
constexpr Api kHostRegisterApi = Api::cuMemHostRegister;

}  // namespace
}  // namespace proflaunch::cuda

#undef cuMemHostRegister
extern "C" CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int flags);

namespace proflaunch::cuda {
namespace {

void* real_cuMemAlloc_v2;
void* real_cuMemAllocPitch_v2;
void* real_cuMemAllocManaged;
void* real_cuMemFree_v2;
void* real_cuMemAllocHost_v2;
void* real_cuMemHostAlloc;
void* real_cuMemFreeHost;
void* real_cuMemHostRegister;
void* real_cuMemHostRegister_v2;
void* real_cuMemHostUnregister;
void* real_cuMemGetInfo_v2;

// An allocation whose address comes back through `output` (a CUdeviceptr*
// or a void**); `shape` holds what is known before the call.
template <typename CallReal, typename Output>
CUresult traced_allocation(Api api, AllocationKind kind, CallReal&& call_real, MemoryShape shape,
                           Output* output) {
  return traced_memory(api, kind, MemoryAction::kAcquire, 0, nothing_before, call_real, [&](CUresult result) {
    shape.address = output_address(result, output);
    return shape;
  });
}

using HostRegister = CUresult(void*, size_t, unsigned int);

CUresult host_register(HostRegister* real, void* p, size_t bytes, unsigned int flags) {
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(kHostRegisterApi, AllocationKind::kRegisteredHost, MemoryAction::kAcquire, 0, nothing_before,
                       [&] { return real(p, bytes, flags); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = address_value(p);
                         shape.bytes = bytes;
                         shape.flags = flags;
                         return shape;
                       });
}

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemAlloc_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  MemoryShape shape;
  shape.bytes = bytesize;
  return traced_allocation(Api::cuMemAlloc, AllocationKind::kDevice, [&] { return real(dptr, bytesize); },
                           shape, dptr);
}

PROFLAUNCH_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width_bytes,
                                              size_t height, unsigned int element_bytes) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemAllocPitch_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(
      Api::cuMemAllocPitch, AllocationKind::kDevice, MemoryAction::kAcquire, 0, nothing_before,
      [&] { return real(dptr, pitch, width_bytes, height, element_bytes); }, [&](CUresult result) {
        MemoryShape shape;
        shape.address = output_address(result, dptr);
        const bool pitched = result == CUDA_SUCCESS && pitch != nullptr;
        shape.pitch_or_offset_bytes = pitched ? *pitch : 0;
        // What the allocation occupies; a failed one asked for at least this.
        shape.bytes = (pitched ? *pitch : width_bytes) * height;
        return shape;
      });
}

PROFLAUNCH_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemAllocManaged, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  MemoryShape shape;
  shape.bytes = bytesize;
  shape.flags = flags;
  return traced_allocation(Api::cuMemAllocManaged, AllocationKind::kManaged,
                           [&] { return real(dptr, bytesize, flags); }, shape, dptr);
}

// A managed address is freed here too; it is recorded as device memory (the
// shim does not look addresses up) and the tools take the kind from the
// allocation.
PROFLAUNCH_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemFree_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemFree, AllocationKind::kDevice, MemoryAction::kRelease, 0, nothing_before,
                       [&] { return real(dptr); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = dptr;
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemAllocHost_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  MemoryShape shape;
  shape.bytes = bytesize;
  return traced_allocation(Api::cuMemAllocHost, AllocationKind::kPinnedHost,
                           [&] { return real(pp, bytesize); }, shape, pp);
}

PROFLAUNCH_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemHostAlloc, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  MemoryShape shape;
  shape.bytes = bytesize;
  shape.flags = flags;
  return traced_allocation(Api::cuMemHostAlloc, AllocationKind::kPinnedHost,
                           [&] { return real(pp, bytesize, flags); }, shape, pp);
}

PROFLAUNCH_EXPORT CUresult cuMemFreeHost(void* p) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemFreeHost, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemFreeHost, AllocationKind::kPinnedHost, MemoryAction::kRelease, 0,
                       nothing_before, [&] { return real(p); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = address_value(p);
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int flags) {
  using namespace pc;
  return host_register(PROFLAUNCH_REAL(cuMemHostRegister, kDriverLibrary), p, bytesize, flags);
}

PROFLAUNCH_EXPORT CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int flags) {
  using namespace pc;
  return host_register(PROFLAUNCH_REAL(cuMemHostRegister_v2, kDriverLibrary), p, bytesize, flags);
}

PROFLAUNCH_EXPORT CUresult cuMemHostUnregister(void* p) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemHostUnregister, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemHostUnregister, AllocationKind::kRegisteredHost, MemoryAction::kRelease, 0,
                       nothing_before, [&] { return real(p); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.address = address_value(p);
                         return shape;
                       });
}

PROFLAUNCH_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemGetInfo_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  proflaunch::ReentrancyGuard guard;
  if (!guard.outermost() || !memory_domain_recording()) return real(free_bytes, total_bytes);
  CUcontext context = nullptr;
  const int device = current_device(&context);
  DriverCall call(Api::cuMemGetInfo, Operation::kMemoryInfo, 0);
  const CUresult result = real(free_bytes, total_bytes);
  if (auto* record = proflaunch::emit<proflaunch::format::MemoryInfoRecord>()) {
    call.finish(record->span, result);
    record->device = device;
    const bool answered = result == CUDA_SUCCESS && free_bytes != nullptr && total_bytes != nullptr;
    record->free_bytes = answered ? *free_bytes : 0;
    record->total_bytes = answered ? *total_bytes : 0;
    proflaunch::commit();
  }
  return result;
}

}  // extern "C"

namespace proflaunch::cuda {

HookFamily memory_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuMemAlloc_v2, "cuMemAlloc", 3020, false, kDriverLibrary, real_cuMemAlloc_v2),
      PROFLAUNCH_HOOK(cuMemAllocPitch_v2, "cuMemAllocPitch", 3020, false, kDriverLibrary, real_cuMemAllocPitch_v2),
      PROFLAUNCH_HOOK(cuMemAllocManaged, "cuMemAllocManaged", 6000, false, kDriverLibrary, real_cuMemAllocManaged),
      PROFLAUNCH_HOOK(cuMemFree_v2, "cuMemFree", 3020, false, kDriverLibrary, real_cuMemFree_v2),
      PROFLAUNCH_HOOK(cuMemAllocHost_v2, "cuMemAllocHost", 3020, false, kDriverLibrary, real_cuMemAllocHost_v2),
      PROFLAUNCH_HOOK(cuMemHostAlloc, "cuMemHostAlloc", 2020, false, kDriverLibrary, real_cuMemHostAlloc),
      PROFLAUNCH_HOOK(cuMemFreeHost, "cuMemFreeHost", 2000, false, kDriverLibrary, real_cuMemFreeHost),
      PROFLAUNCH_HOOK(cuMemHostRegister, "cuMemHostRegister", 4000, false, kDriverLibrary, real_cuMemHostRegister),
      PROFLAUNCH_HOOK(cuMemHostRegister_v2, "cuMemHostRegister", 6050, false, kDriverLibrary, real_cuMemHostRegister_v2),
      PROFLAUNCH_HOOK(cuMemHostUnregister, "cuMemHostUnregister", 4000, false, kDriverLibrary, real_cuMemHostUnregister),
      PROFLAUNCH_HOOK(cuMemGetInfo_v2, "cuMemGetInfo", 3020, false, kDriverLibrary, real_cuMemGetInfo_v2),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
