// Allocators, copies and memsets. HIP's rules, where they differ from the
// driver's: a zero-byte hipMalloc succeeds with a null pointer, hipFree(NULL)
// succeeds, and hipMemcpy returns only once the copy is done, device to
// device included.
#include <algorithm>
#include <cstring>

#include "hip_state.h"

using namespace simhip;

namespace {

hipError_t allocate_device(void** ptr, size_t size) {
  if (ptr == nullptr) return hipErrorInvalidValue;
  *ptr = nullptr;
  if (size == 0) return hipSuccess;
  CUdeviceptr address = 0;
  const CUresult r = cuMemAlloc(&address, size);
  if (r != CUDA_SUCCESS) return to_hip(r);
  *ptr = reinterpret_cast<void*>(address);
  return hipSuccess;
}

hipError_t allocate_host(void** ptr, size_t size) {
  if (ptr == nullptr) return hipErrorInvalidValue;
  *ptr = nullptr;
  if (size == 0) return hipSuccess;
  return to_hip(cuMemHostAlloc(ptr, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
}

hipError_t free_host(void* ptr) { return ptr == nullptr ? hipSuccess : to_hip(cuMemFreeHost(ptr)); }

CUdeviceptr dev(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

bool valid_kind(hipMemcpyKind kind) { return kind >= hipMemcpyHostToHost && kind <= hipMemcpyDefault; }

// hipMemcpy: on the null stream, and done when it returns.
hipError_t copy_sync(void* dst, const void* src, size_t bytes, hipStream_t stream) {
  if (bytes == 0) return hipSuccess;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  if (CUresult r = cuMemcpyAsync(dev(dst), dev(src), bytes, cu(stream)); r != CUDA_SUCCESS) return to_hip(r);
  return to_hip(cuStreamSynchronize(cu(stream)));
}

hipError_t copy_async(void* dst, const void* src, size_t bytes, hipStream_t stream) {
  if (bytes == 0) return hipSuccess;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  return to_hip(cuMemcpyAsync(dev(dst), dev(src), bytes, cu(stream)));
}

hipError_t copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   hipStream_t stream, bool sync) {
  if (width == 0 || height == 0) return hipSuccess;
  if (width > dpitch || width > spitch) return hipErrorInvalidPitchValue;
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.srcDevice = dev(src);
  copy.srcPitch = spitch;
  copy.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
  copy.dstDevice = dev(dst);
  copy.dstPitch = dpitch;
  copy.WidthInBytes = width;
  copy.Height = height;
  if (CUresult r = cuMemcpy2DAsync(&copy, cu(stream)); r != CUDA_SUCCESS) return to_hip(r);
  return sync ? to_hip(cuStreamSynchronize(cu(stream))) : hipSuccess;
}

hipError_t memset_bytes(void* dst, int value, size_t bytes, hipStream_t stream, bool sync) {
  if (bytes == 0) return hipSuccess;
  if (CUresult r = cuMemsetD8Async(dev(dst), static_cast<unsigned char>(value), bytes, cu(stream)); r != CUDA_SUCCESS)
    return to_hip(r);
  return sync ? to_hip(cuStreamSynchronize(cu(stream))) : hipSuccess;
}

hipError_t memset_2d(void* dst, size_t pitch, int value, size_t width, size_t height, hipStream_t stream, bool sync) {
  if (width == 0 || height == 0) return hipSuccess;
  if (CUresult r = cuMemsetD2D8Async(dev(dst), pitch, static_cast<unsigned char>(value), width, height, cu(stream));
      r != CUDA_SUCCESS) {
    return to_hip(r);
  }
  return sync ? to_hip(cuStreamSynchronize(cu(stream))) : hipSuccess;
}

// A copy to (`to_symbol`) or from a registered __device__ variable, at
// `offset` into it; the range must lie within the variable.
hipError_t symbol_copy(const void* symbol, size_t offset, size_t bytes, const void* host_side, bool to_symbol,
                       hipStream_t stream, bool sync) {
  CUdeviceptr address = 0;
  size_t size = 0;
  if (hipError_t r = symbol_address(symbol, &address, &size); r != hipSuccess) return r;
  if (offset > size || bytes > size - offset) return hipErrorInvalidValue;
  void* device_side = reinterpret_cast<void*>(address + offset);
  void* dst = to_symbol ? device_side : const_cast<void*>(host_side);
  const void* src = to_symbol ? host_side : device_side;
  return sync ? copy_sync(dst, src, bytes, stream) : copy_async(dst, src, bytes, stream);
}

}  // namespace

extern "C" {

// ---- allocators

hipError_t hipMalloc(void** ptr, size_t size) { return device_api([&] { return allocate_device(ptr, size); }); }

hipError_t hipExtMallocWithFlags(void** ptr, size_t sizeBytes, unsigned int flags) {
  return device_api([&] {
    if ((flags & ~unsigned(hipDeviceMallocFinegrained | hipMallocSignalMemory)) != 0)
      return hipErrorInvalidValue;
    return allocate_device(ptr, sizeBytes);
  });
}

hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  return device_api([&] {
    if (ptr == nullptr || pitch == nullptr) return hipErrorInvalidValue;
    CUdeviceptr address = 0;
    if (CUresult r = cuMemAllocPitch(&address, pitch, width, height, 16); r != CUDA_SUCCESS) return to_hip(r);
    *ptr = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t hipFree(void* ptr) {
  return device_api([&] {
    if (ptr == nullptr) return hipSuccess;
    // hipFree synchronizes the device first, as the HIP documentation says.
    if (CUresult r = cuCtxSynchronize(); r != CUDA_SUCCESS) return to_hip(r);
    return to_hip(cuMemFree(dev(ptr)));
  });
}

hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int) {
  return device_api([&] { return allocate_host(ptr, size); });
}
hipError_t hipHostAlloc(void** ptr, size_t size, unsigned int) {
  return device_api([&] { return allocate_host(ptr, size); });
}
hipError_t hipMallocHost(void** ptr, size_t size) { return device_api([&] { return allocate_host(ptr, size); }); }
hipError_t hipMemAllocHost(void** ptr, size_t size) { return device_api([&] { return allocate_host(ptr, size); }); }
hipError_t hipHostFree(void* ptr) { return device_api([&] { return free_host(ptr); }); }
hipError_t hipFreeHost(void* ptr) { return device_api([&] { return free_host(ptr); }); }

hipError_t hipHostRegister(void* hostPtr, size_t sizeBytes, unsigned int) {
  return device_api([&] { return to_hip(cuMemHostRegister(hostPtr, sizeBytes, CU_MEMHOSTREGISTER_PORTABLE)); });
}
hipError_t hipHostUnregister(void* hostPtr) {
  return device_api([&] { return to_hip(cuMemHostUnregister(hostPtr)); });
}
hipError_t hipHostGetDevicePointer(void** devPtr, void* hstPtr, unsigned int flags) {
  return device_api([&] {
    if (devPtr == nullptr) return hipErrorInvalidValue;
    CUdeviceptr address = 0;
    if (CUresult r = cuMemHostGetDevicePointer(&address, hstPtr, flags); r != CUDA_SUCCESS) return to_hip(r);
    *devPtr = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t hipMallocManaged(void** dev_ptr, size_t size, unsigned int flags) {
  return device_api([&] {
    if (dev_ptr == nullptr) return hipErrorInvalidValue;
    *dev_ptr = nullptr;
    if (size == 0) return hipSuccess;
    CUdeviceptr address = 0;
    const unsigned attach = flags == hipMemAttachHost ? CU_MEM_ATTACH_HOST : CU_MEM_ATTACH_GLOBAL;
    if (CUresult r = cuMemAllocManaged(&address, size, attach); r != CUDA_SUCCESS) return to_hip(r);
    *dev_ptr = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t hipMallocAsync(void** dev_ptr, size_t size, hipStream_t stream) {
  return device_api([&] {
    if (dev_ptr == nullptr) return hipErrorInvalidValue;
    CUdeviceptr address = 0;
    if (CUresult r = cuMemAllocAsync(&address, size, cu(stream)); r != CUDA_SUCCESS) return to_hip(r);
    *dev_ptr = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t hipMallocFromPoolAsync(void** dev_ptr, size_t size, hipMemPool_t mem_pool, hipStream_t stream) {
  return device_api([&] {
    if (dev_ptr == nullptr) return hipErrorInvalidValue;
    CUdeviceptr address = 0;
    if (CUresult r = cuMemAllocFromPoolAsync(&address, size, reinterpret_cast<CUmemoryPool>(mem_pool), cu(stream));
        r != CUDA_SUCCESS) {
      return to_hip(r);
    }
    *dev_ptr = reinterpret_cast<void*>(address);
    return hipSuccess;
  });
}

hipError_t hipFreeAsync(void* dev_ptr, hipStream_t stream) {
  return device_api([&] { return to_hip(cuMemFreeAsync(dev(dev_ptr), cu(stream))); });
}

hipError_t hipMemPoolCreate(hipMemPool_t* mem_pool, const hipMemPoolProps* pool_props) {
  return device_api([&] {
    if (mem_pool == nullptr || pool_props == nullptr) return hipErrorInvalidValue;
    CUmemPoolProps props{};
    props.allocType = static_cast<CUmemAllocationType>(pool_props->allocType);
    props.handleTypes = static_cast<CUmemAllocationHandleType>(pool_props->handleTypes);
    props.location.type = static_cast<CUmemLocationType>(pool_props->location.type);
    props.location.id = pool_props->location.id;
    props.maxSize = 0;
    CUmemoryPool pool = nullptr;
    if (CUresult r = cuMemPoolCreate(&pool, &props); r != CUDA_SUCCESS) return to_hip(r);
    *mem_pool = reinterpret_cast<hipMemPool_t>(pool);
    return hipSuccess;
  });
}

hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool) {
  return device_api([&] { return to_hip(cuMemPoolDestroy(reinterpret_cast<CUmemoryPool>(mem_pool))); });
}

hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool, size_t min_bytes_to_hold) {
  return device_api(
      [&] { return to_hip(cuMemPoolTrimTo(reinterpret_cast<CUmemoryPool>(mem_pool), min_bytes_to_hold)); });
}

// hipMemPoolAttr and CUmemPool_attribute number their attributes alike (1..8).
hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr, void* value) {
  return device_api([&] {
    return to_hip(cuMemPoolSetAttribute(reinterpret_cast<CUmemoryPool>(mem_pool),
                                        static_cast<CUmemPool_attribute>(attr), value));
  });
}

hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr, void* value) {
  return device_api([&] {
    return to_hip(cuMemPoolGetAttribute(reinterpret_cast<CUmemoryPool>(mem_pool),
                                        static_cast<CUmemPool_attribute>(attr), value));
  });
}

hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t* mem_pool, int device) {
  return device_api([&] {
    return to_hip(cuDeviceGetDefaultMemPool(reinterpret_cast<CUmemoryPool*>(mem_pool), device));
  });
}

hipError_t hipDeviceGetMemPool(hipMemPool_t* mem_pool, int device) {
  return device_api([&] { return to_hip(cuDeviceGetMemPool(reinterpret_cast<CUmemoryPool*>(mem_pool), device)); });
}

hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool) {
  return device_api([&] { return to_hip(cuDeviceSetMemPool(device, reinterpret_cast<CUmemoryPool>(mem_pool))); });
}

hipError_t hipMemGetInfo(size_t* free, size_t* total) {
  return device_api([&] { return to_hip(cuMemGetInfo(free, total)); });
}

// ---- copies

hipError_t hipMemcpy(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind) {
  return device_api([&] { return valid_kind(kind) ? copy_sync(dst, src, sizeBytes, nullptr) : hipErrorInvalidMemcpyDirection; });
}
hipError_t hipMemcpy_spt(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind) {
  return device_api([&] {
    return valid_kind(kind) ? copy_sync(dst, src, sizeBytes, hipStreamPerThread) : hipErrorInvalidMemcpyDirection;
  });
}
hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream) {
  return device_api([&] { return valid_kind(kind) ? copy_sync(dst, src, sizeBytes, stream) : hipErrorInvalidMemcpyDirection; });
}
hipError_t hipMemcpyAsync(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream) {
  return device_api([&] { return valid_kind(kind) ? copy_async(dst, src, sizeBytes, stream) : hipErrorInvalidMemcpyDirection; });
}
hipError_t hipMemcpyAsync_spt(void* dst, const void* src, size_t sizeBytes, hipMemcpyKind kind, hipStream_t stream) {
  return hipMemcpyAsync(dst, src, sizeBytes, kind, stream == nullptr ? hipStreamPerThread : stream);
}
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t sizeBytes) {
  return device_api([&] { return copy_sync(dst, src, sizeBytes, nullptr); });
}
hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t sizeBytes) {
  return device_api([&] { return copy_sync(dst, src, sizeBytes, nullptr); });
}
hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes) {
  return device_api([&] { return copy_sync(dst, src, sizeBytes, nullptr); });
}
hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t sizeBytes, hipStream_t stream) {
  return device_api([&] { return copy_async(dst, src, sizeBytes, stream); });
}
hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream) {
  return device_api([&] { return copy_async(dst, src, sizeBytes, stream); });
}
hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream) {
  return device_api([&] { return copy_async(dst, src, sizeBytes, stream); });
}
hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                       hipMemcpyKind) {
  return device_api([&] { return copy_2d(dst, dpitch, src, spitch, width, height, nullptr, true); });
}
hipError_t hipMemcpy2D_spt(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                           hipMemcpyKind) {
  return device_api([&] { return copy_2d(dst, dpitch, src, spitch, width, height, hipStreamPerThread, true); });
}
hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                            hipMemcpyKind, hipStream_t stream) {
  return device_api([&] { return copy_2d(dst, dpitch, src, spitch, width, height, stream, false); });
}
hipError_t hipMemcpyPeer(void* dst, int dstDeviceId, const void* src, int srcDeviceId, size_t sizeBytes) {
  return device_api([&] {
    (void)dstDeviceId;
    (void)srcDeviceId;
    return copy_sync(dst, src, sizeBytes, nullptr);
  });
}
hipError_t hipMemcpyPeerAsync(void* dst, int dstDeviceId, const void* src, int srcDevice, size_t sizeBytes,
                              hipStream_t stream) {
  return device_api([&] {
    (void)dstDeviceId;
    (void)srcDevice;
    return copy_async(dst, src, sizeBytes, stream);
  });
}

hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t sizeBytes, size_t offset, hipMemcpyKind) {
  return device_api([&] { return symbol_copy(symbol, offset, sizeBytes, src, true, nullptr, true); });
}
hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t sizeBytes, size_t offset,
                                  hipMemcpyKind, hipStream_t stream) {
  return device_api([&] { return symbol_copy(symbol, offset, sizeBytes, src, true, stream, false); });
}
hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t sizeBytes, size_t offset, hipMemcpyKind) {
  return device_api([&] { return symbol_copy(symbol, offset, sizeBytes, dst, false, nullptr, true); });
}
hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t sizeBytes, size_t offset, hipMemcpyKind,
                                    hipStream_t stream) {
  return device_api([&] { return symbol_copy(symbol, offset, sizeBytes, dst, false, stream, false); });
}

// ---- memsets

hipError_t hipMemset(void* dst, int value, size_t sizeBytes) {
  return device_api([&] { return memset_bytes(dst, value, sizeBytes, nullptr, true); });
}
hipError_t hipMemset_spt(void* dst, int value, size_t sizeBytes) {
  return device_api([&] { return memset_bytes(dst, value, sizeBytes, hipStreamPerThread, true); });
}
hipError_t hipMemsetAsync(void* dst, int value, size_t sizeBytes, hipStream_t stream) {
  return device_api([&] { return memset_bytes(dst, value, sizeBytes, stream, false); });
}
hipError_t hipMemsetD8(hipDeviceptr_t dest, unsigned char value, size_t count) {
  return device_api([&] { return memset_bytes(dest, value, count, nullptr, true); });
}
hipError_t hipMemsetD8Async(hipDeviceptr_t dest, unsigned char value, size_t count, hipStream_t stream) {
  return device_api([&] { return memset_bytes(dest, value, count, stream, false); });
}
hipError_t hipMemsetD32(hipDeviceptr_t dest, int value, size_t count) {
  return device_api([&] { return to_hip(cuMemsetD32(dev(dest), static_cast<unsigned>(value), count)); });
}
hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream) {
  return device_api(
      [&] { return to_hip(cuMemsetD32Async(dev(dst), static_cast<unsigned>(value), count, cu(stream))); });
}
hipError_t hipMemsetD16(hipDeviceptr_t dest, unsigned short value, size_t count) {
  return device_api([&] { return to_hip(cuMemsetD16(dev(dest), value, count)); });
}
hipError_t hipMemsetD16Async(hipDeviceptr_t dest, unsigned short value, size_t count, hipStream_t stream) {
  return device_api([&] { return to_hip(cuMemsetD16Async(dev(dest), value, count, cu(stream))); });
}
hipError_t hipMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return device_api([&] { return memset_2d(dst, pitch, value, width, height, nullptr, true); });
}
hipError_t hipMemset2D_spt(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return device_api([&] { return memset_2d(dst, pitch, value, width, height, hipStreamPerThread, true); });
}
hipError_t hipMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t height, hipStream_t stream) {
  return device_api([&] { return memset_2d(dst, pitch, value, width, height, stream, false); });
}

}  // extern "C"

extern "C" {

// An address the runtime did not allocate or register is an error
// (hipErrorInvalidValue), as HIP answers for pageable host memory.
hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* ptr) {
  return api([&] {
    if (attributes == nullptr || ptr == nullptr) return hipErrorInvalidValue;
    if (hipError_t ready = initialize(); ready != hipSuccess) return ready;
    CUpointer_attribute names[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED};
    unsigned int memory_type = 0;
    int ordinal = -1;
    int managed = 0;
    void* values[] = {&memory_type, &ordinal, &managed};
    if (CUresult r = cuPointerGetAttributes(3, names, values, dev(ptr)); r != CUDA_SUCCESS) return to_hip(r);
    if (memory_type == 0) return hipErrorInvalidValue;  // not the runtime's memory
    std::memset(attributes, 0, sizeof *attributes);
    attributes->memoryType = memory_type == CU_MEMORYTYPE_HOST ? hipMemoryTypeHost : hipMemoryTypeDevice;
    attributes->device = ordinal < 0 ? 0 : ordinal;
    attributes->isManaged = managed;
    attributes->devicePointer = const_cast<void*>(ptr);
    attributes->hostPointer = memory_type == CU_MEMORYTYPE_HOST || managed ? const_cast<void*>(ptr) : nullptr;
    return hipSuccess;
  });
}

}  // extern "C"
