// Stream-ordered allocation (cudaMallocAsync family) and memory pools.
// cudaMemPool_t is the driver's CUmemoryPool.
#include <cuda_runtime_api.h>

#include "context.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

static_assert(sizeof(cudaMemPoolProps) == sizeof(CUmemPoolProps));
static_assert(static_cast<int>(cudaMemPoolAttrReleaseThreshold) ==
              static_cast<int>(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD));
static_assert(static_cast<int>(cudaMemPoolAttrUsedMemHigh) ==
              static_cast<int>(CU_MEMPOOL_ATTR_USED_MEM_HIGH));

namespace {

cudaError_t malloc_async(DefaultStream mode, void** pointer, size_t bytes, cudaStream_t stream) {
  if (pointer == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(mode, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    CUresult result = api.cuMemAllocAsync(&address, bytes, stream);
    if (result == CUDA_SUCCESS) *pointer = reinterpret_cast<void*>(address);
    return result;
  });
}

cudaError_t free_async(DefaultStream mode, void* pointer, cudaStream_t stream) {
  return with_context(mode, [&](const DriverApi& api) {
    return api.cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(pointer), stream);
  });
}

cudaError_t malloc_from_pool_async(DefaultStream mode, void** pointer, size_t bytes,
                                   cudaMemPool_t pool, cudaStream_t stream) {
  if (pointer == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(mode, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    CUresult result = api.cuMemAllocFromPoolAsync(&address, bytes, pool, stream);
    if (result == CUDA_SUCCESS) *pointer = reinterpret_cast<void*>(address);
    return result;
  });
}

}  // namespace

extern "C" {

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  return traced("cudaMallocAsync", [&] { return malloc_async(DefaultStream::legacy, devPtr, size, hStream); });
}
cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  return traced("cudaMallocAsync_ptsz", [&] { return malloc_async(DefaultStream::per_thread, devPtr, size, hStream); });
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return traced("cudaFreeAsync", [&] { return free_async(DefaultStream::legacy, devPtr, hStream); });
}
cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return traced("cudaFreeAsync_ptsz", [&] { return free_async(DefaultStream::per_thread, devPtr, hStream); });
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream) {
  return traced("cudaMallocFromPoolAsync", [&] { return malloc_from_pool_async(DefaultStream::legacy, ptr, size, memPool, stream); });
}
cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                         cudaStream_t stream) {
  return traced("cudaMallocFromPoolAsync_ptsz", [&] { return malloc_from_pool_async(DefaultStream::per_thread, ptr, size, memPool, stream); });
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdevice handle = 0;
    if (CUresult result = api.cuDeviceGet(&handle, device)) return result;
    return api.cuDeviceGetDefaultMemPool(memPool, handle);
  });
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdevice handle = 0;
    if (CUresult result = api.cuDeviceGet(&handle, device)) return result;
    return api.cuDeviceGetMemPool(memPool, handle);
  });
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdevice handle = 0;
    if (CUresult result = api.cuDeviceGet(&handle, device)) return result;
    return api.cuDeviceSetMemPool(handle, memPool);
  });
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuMemPoolTrimTo(memPool, minBytesToKeep);
  });
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuMemPoolGetAttribute(memPool, static_cast<CUmemPool_attribute>(attr), value);
  });
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuMemPoolSetAttribute(memPool, static_cast<CUmemPool_attribute>(attr), value);
  });
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool, const struct cudaMemPoolProps* poolProps) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuMemPoolCreate(memPool, reinterpret_cast<const CUmemPoolProps*>(poolProps));
  });
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuMemPoolDestroy(memPool); });
}

}  // extern "C"
