// Stream-ordered allocation: cuMemAllocAsync, cuMemAllocFromPoolAsync,
// cuMemFreeAsync (each with its _ptsz variant) and cuMemPoolTrimTo. A pool
// reserves device memory as it needs it and keeps it after frees (up to its
// release threshold, until a synchronization or a trim), so each record also
// carries the pool's reserved size after the call: the only way the tools
// can tell how much the process holds from the driver.
#include <cuda.h>

#include "preload/cuda/hook_registry.h"
#include "preload/cuda/memory_pool_queries.h"
#include "preload/cuda/memory_recording.h"

extern "C" {
CUresult cuMemAllocAsync_ptsz(CUdeviceptr*, size_t, CUstream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr*, size_t, CUmemoryPool, CUstream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr, CUstream);
}

namespace proflaunch::cuda {
namespace {

using format::AllocationKind;
using format::MemoryAction;

void* real_cuMemAllocAsync;
void* real_cuMemAllocAsync_ptsz;
void* real_cuMemAllocFromPoolAsync;
void* real_cuMemAllocFromPoolAsync_ptsz;
void* real_cuMemFreeAsync;
void* real_cuMemFreeAsync_ptsz;
void* real_cuMemPoolTrimTo;

// `pool` null: the device's current pool (cuMemAllocAsync).
template <typename CallReal>
CUresult traced_pool_allocation(Api api, bool per_thread, CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool,
                                CUstream stream, CallReal&& call_real) {
  return traced_memory(api, AllocationKind::kPool, MemoryAction::kAcquire, variant_flags(per_thread, true),
                       nothing_before, call_real, [&](CUresult result) {
                         MemoryShape shape;
                         shape.address = output_address(result, dptr);
                         shape.bytes = bytes;
                         shape.stream = stream_handle(stream, per_thread);
                         CUmemoryPool from = pool;
                         if (from == nullptr) {
                           from = shape.address != 0 ? pool_of_address(shape.address) : nullptr;
                           if (from == nullptr) {
                             CUcontext context = nullptr;
                             from = current_pool_of_device(current_device(&context));
                           }
                         }
                         shape.handle = reinterpret_cast<uint64_t>(from);
                         shape.pool_reserved_bytes = pool_reserved_bytes(from);
                         return shape;
                       });
}

CUresult alloc_async(bool per_thread, CUdeviceptr* dptr, size_t bytes, CUstream stream) {
  auto* real = per_thread ? PROFLAUNCH_REAL(cuMemAllocAsync_ptsz, kDriverLibrary)
                          : PROFLAUNCH_REAL(cuMemAllocAsync, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_pool_allocation(Api::cuMemAllocAsync, per_thread, dptr, bytes, nullptr, stream,
                                [&] { return real(dptr, bytes, stream); });
}

CUresult alloc_from_pool_async(bool per_thread, CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool,
                               CUstream stream) {
  auto* real = per_thread ? PROFLAUNCH_REAL(cuMemAllocFromPoolAsync_ptsz, kDriverLibrary)
                          : PROFLAUNCH_REAL(cuMemAllocFromPoolAsync, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_pool_allocation(Api::cuMemAllocFromPoolAsync, per_thread, dptr, bytes, pool, stream,
                                [&] { return real(dptr, bytes, pool, stream); });
}

CUresult free_async(bool per_thread, CUdeviceptr dptr, CUstream stream) {
  auto* real = per_thread ? PROFLAUNCH_REAL(cuMemFreeAsync_ptsz, kDriverLibrary)
                          : PROFLAUNCH_REAL(cuMemFreeAsync, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  CUmemoryPool pool = nullptr;
  return traced_memory(
      Api::cuMemFreeAsync, AllocationKind::kPool, MemoryAction::kRelease, variant_flags(per_thread, true),
      // After the free the address no longer names a pool allocation.
      [&] { pool = pool_of_address(dptr); }, [&] { return real(dptr, stream); },
      [&](CUresult) {
        MemoryShape shape;
        shape.address = dptr;
        shape.stream = stream_handle(stream, per_thread);
        shape.handle = reinterpret_cast<uint64_t>(pool);
        shape.pool_reserved_bytes = pool_reserved_bytes(pool);
        return shape;
      });
}

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* d, size_t n, CUstream s) { return pc::alloc_async(false, d, n, s); }
PROFLAUNCH_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* d, size_t n, CUstream s) { return pc::alloc_async(true, d, n, s); }
PROFLAUNCH_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* d, size_t n, CUmemoryPool p, CUstream s) {
  return pc::alloc_from_pool_async(false, d, n, p, s);
}
PROFLAUNCH_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* d, size_t n, CUmemoryPool p, CUstream s) {
  return pc::alloc_from_pool_async(true, d, n, p, s);
}
PROFLAUNCH_EXPORT CUresult cuMemFreeAsync(CUdeviceptr d, CUstream s) { return pc::free_async(false, d, s); }
PROFLAUNCH_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream s) { return pc::free_async(true, d, s); }

PROFLAUNCH_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep_bytes) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuMemPoolTrimTo, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_memory(Api::cuMemPoolTrimTo, proflaunch::format::AllocationKind::kPool,
                       proflaunch::format::MemoryAction::kTrim, 0, nothing_before,
                       [&] { return real(pool, keep_bytes); }, [&](CUresult) {
                         MemoryShape shape;
                         shape.bytes = keep_bytes;
                         shape.handle = reinterpret_cast<uint64_t>(pool);
                         shape.pool_reserved_bytes = pool_reserved_bytes(pool);
                         return shape;
                       });
}

}  // extern "C"

namespace proflaunch::cuda {

HookFamily pool_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuMemAllocAsync, "cuMemAllocAsync", 11020, false, kDriverLibrary, real_cuMemAllocAsync),
      PROFLAUNCH_HOOK(cuMemAllocAsync_ptsz, "cuMemAllocAsync", 11020, true, kDriverLibrary, real_cuMemAllocAsync_ptsz),
      PROFLAUNCH_HOOK(cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", 11020, false, kDriverLibrary, real_cuMemAllocFromPoolAsync),
      PROFLAUNCH_HOOK(cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", 11020, true, kDriverLibrary, real_cuMemAllocFromPoolAsync_ptsz),
      PROFLAUNCH_HOOK(cuMemFreeAsync, "cuMemFreeAsync", 11020, false, kDriverLibrary, real_cuMemFreeAsync),
      PROFLAUNCH_HOOK(cuMemFreeAsync_ptsz, "cuMemFreeAsync", 11020, true, kDriverLibrary, real_cuMemFreeAsync_ptsz),
      PROFLAUNCH_HOOK(cuMemPoolTrimTo, "cuMemPoolTrimTo", 11020, false, kDriverLibrary, real_cuMemPoolTrimTo),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
