// The runtime's allocation calls. Each opens a runtime frame (api_call.h) so
// that the driver allocation or free it makes is recorded once, under the
// runtime's name: cudaMalloc -> cuMemAlloc_v2, cudaMallocAsync ->
// cuMemAllocAsync, cudaMalloc3D -> cuMemAllocPitch_v2, ... They belong to
// the `memory` trace domain, like the driver hooks they lead to.
#include <cuda_runtime_api.h>

#include "preload/cuda/hook_registry.h"
#include "preload/cuda/runtime_call.h"

extern "C" {
cudaError_t cudaMallocAsync_ptsz(void**, size_t, cudaStream_t);
cudaError_t cudaFreeAsync_ptsz(void*, cudaStream_t);
cudaError_t cudaMallocFromPoolAsync_ptsz(void**, size_t, cudaMemPool_t, cudaStream_t);
}

namespace proflaunch::cuda {
namespace {

void* real_cudaMalloc;
void* real_cudaFree;
void* real_cudaMallocAsync;
void* real_cudaMallocAsync_ptsz;
void* real_cudaFreeAsync;
void* real_cudaFreeAsync_ptsz;
void* real_cudaMallocFromPoolAsync;
void* real_cudaMallocFromPoolAsync_ptsz;
void* real_cudaMallocManaged;
void* real_cudaMallocHost;
void* real_cudaHostAlloc;
void* real_cudaFreeHost;
void* real_cudaMallocPitch;
void* real_cudaMalloc3D;
void* real_cudaHostRegister;
void* real_cudaHostUnregister;
void* real_cudaMemGetInfo;
void* real_cudaMemPoolTrimTo;

constexpr uint16_t kSync = 0;
constexpr uint16_t kAsync = format::kApiAsync;
constexpr uint16_t kAsyncPerThread = format::kApiAsync | format::kApiPerThreadStream;

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

// PROFLAUNCH_RUNTIME_HOOK (runtime_call.h) in the memory domain.
#define PROFLAUNCH_RUNTIME_MEMORY_HOOK(symbol, api, operation, flags, params, args) \
  PROFLAUNCH_EXPORT cudaError_t symbol params {                                    \
    using namespace pc;                                                            \
    auto* real = PROFLAUNCH_REAL(symbol, kRuntimeLibrary);                         \
    if (real == nullptr) return cudaErrorInitializationError;                      \
    return traced_runtime_in(proflaunch::kTraceMemory, Api::api, Operation::operation, flags, \
                             nullptr, [&] { return real args; });                  \
  }

extern "C" {

// clang-format off
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMalloc, cudaMalloc, kAllocate, kSync, (void** p, size_t n), (p, n))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaFree, cudaFree, kFree, kSync, (void* p), (p))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocAsync, cudaMallocAsync, kAllocate, kAsync, (void** p, size_t n, cudaStream_t s), (p, n, s))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocAsync_ptsz, cudaMallocAsync, kAllocate, kAsyncPerThread, (void** p, size_t n, cudaStream_t s), (p, n, s))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaFreeAsync, cudaFreeAsync, kFree, kAsync, (void* p, cudaStream_t s), (p, s))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaFreeAsync_ptsz, cudaFreeAsync, kFree, kAsyncPerThread, (void* p, cudaStream_t s), (p, s))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync, kAllocate, kAsync, (void** p, size_t n, cudaMemPool_t m, cudaStream_t s), (p, n, m, s))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocFromPoolAsync_ptsz, cudaMallocFromPoolAsync, kAllocate, kAsyncPerThread, (void** p, size_t n, cudaMemPool_t m, cudaStream_t s), (p, n, m, s))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocManaged, cudaMallocManaged, kAllocate, kSync, (void** p, size_t n, unsigned int f), (p, n, f))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocHost, cudaMallocHost, kAllocate, kSync, (void** p, size_t n), (p, n))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaHostAlloc, cudaHostAlloc, kAllocate, kSync, (void** p, size_t n, unsigned int f), (p, n, f))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaFreeHost, cudaFreeHost, kFree, kSync, (void* p), (p))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMallocPitch, cudaMallocPitch, kAllocate, kSync, (void** p, size_t* pitch, size_t w, size_t h), (p, pitch, w, h))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMalloc3D, cudaMalloc3D, kAllocate, kSync, (cudaPitchedPtr* p, cudaExtent e), (p, e))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaHostRegister, cudaHostRegister, kAllocate, kSync, (void* p, size_t n, unsigned int f), (p, n, f))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaHostUnregister, cudaHostUnregister, kFree, kSync, (void* p), (p))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMemGetInfo, cudaMemGetInfo, kMemoryInfo, kSync, (size_t* f, size_t* t), (f, t))
PROFLAUNCH_RUNTIME_MEMORY_HOOK(cudaMemPoolTrimTo, cudaMemPoolTrimTo, kFree, kSync, (cudaMemPool_t m, size_t n), (m, n))
// clang-format on

}  // extern "C"

namespace proflaunch::cuda {

HookFamily runtime_memory_hooks() {
#define PROFLAUNCH_RUNTIME_ROW(symbol, per_thread) \
  PROFLAUNCH_HOOK(symbol, nullptr, 0, per_thread, kRuntimeLibrary, real_##symbol)
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_RUNTIME_ROW(cudaMalloc, false),
      PROFLAUNCH_RUNTIME_ROW(cudaFree, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocAsync, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocAsync_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaFreeAsync, false),
      PROFLAUNCH_RUNTIME_ROW(cudaFreeAsync_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocFromPoolAsync, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocFromPoolAsync_ptsz, true),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocManaged, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocHost, false),
      PROFLAUNCH_RUNTIME_ROW(cudaHostAlloc, false),
      PROFLAUNCH_RUNTIME_ROW(cudaFreeHost, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMallocPitch, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMalloc3D, false),
      PROFLAUNCH_RUNTIME_ROW(cudaHostRegister, false),
      PROFLAUNCH_RUNTIME_ROW(cudaHostUnregister, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemGetInfo, false),
      PROFLAUNCH_RUNTIME_ROW(cudaMemPoolTrimTo, false),
  };
#undef PROFLAUNCH_RUNTIME_ROW
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
