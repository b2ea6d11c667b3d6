// Allocation: device, pinned host, registered host, managed and pitched
// memory, memory info and pointer attributes. Every call goes to the driver
// function the real runtime uses for it (cudaMalloc -> cuMemAlloc_v2, ...).
#include <cuda_runtime_api.h>

#include "context.h"
#include "errors.h"

using namespace simgpu_runtime;

static_assert(cudaHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(cudaHostAllocMapped == CU_MEMHOSTALLOC_DEVICEMAP);
static_assert(cudaHostAllocWriteCombined == CU_MEMHOSTALLOC_WRITECOMBINED);
static_assert(cudaHostRegisterMapped == CU_MEMHOSTREGISTER_DEVICEMAP);
static_assert(cudaMemAttachGlobal == CU_MEM_ATTACH_GLOBAL);

namespace {

// cuMemAllocPitch rows are aligned for this element size; 16 bytes is the
// largest the driver accepts and satisfies every element type.
constexpr unsigned int kPitchElementBytes = 16;

template <typename Pointer>
CUresult allocate_device(const DriverApi& api, Pointer** pointer, size_t bytes) {
  CUdeviceptr address = 0;
  CUresult result = api.cuMemAlloc(&address, bytes);
  if (result == CUDA_SUCCESS) *pointer = reinterpret_cast<Pointer*>(address);
  return result;
}

}  // namespace

extern "C" {

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
  // The runtime answers a zero-byte request itself: a null pointer, success.
  if (size == 0) {
    *devPtr = nullptr;
    const DriverApi* api = nullptr;
    return finish(enter_with_context(DefaultStream::legacy, &api));
  }
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return allocate_device(api, devPtr, size); });
}

cudaError_t cudaFree(void* devPtr) {
  // cudaFree(nullptr) is the idiom programs use to create the context.
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    if (devPtr == nullptr) return CUDA_SUCCESS;
    return api.cuMemFree(reinterpret_cast<CUdeviceptr>(devPtr));
  });
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  if (ptr == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuMemAllocHost(ptr, size); });
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  if (pHost == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuMemHostAlloc(pHost, size, flags); });
}

cudaError_t cudaFreeHost(void* ptr) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    if (ptr == nullptr) return CUDA_SUCCESS;
    return api.cuMemFreeHost(ptr);
  });
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuMemHostRegister(ptr, size, flags);
  });
}

cudaError_t cudaHostUnregister(void* ptr) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuMemHostUnregister(ptr); });
}

cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  if (pDevice == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    CUresult result = api.cuMemHostGetDevicePointer(&address, pHost, flags);
    if (result == CUDA_SUCCESS) *pDevice = reinterpret_cast<void*>(address);
    return result;
  });
}

cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuMemHostGetFlags(pFlags, pHost); });
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    CUresult result = api.cuMemAllocManaged(&address, size, flags);
    if (result == CUDA_SUCCESS) *devPtr = reinterpret_cast<void*>(address);
    return result;
  });
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  if (devPtr == nullptr || pitch == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    CUresult result = api.cuMemAllocPitch(&address, pitch, width, height, kPitchElementBytes);
    if (result == CUDA_SUCCESS) *devPtr = reinterpret_cast<void*>(address);
    return result;
  });
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr* pitchedDevPtr, struct cudaExtent extent) {
  if (pitchedDevPtr == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    size_t pitch = 0;
    CUresult result = api.cuMemAllocPitch(&address, &pitch, extent.width,
                                          extent.height * extent.depth, kPitchElementBytes);
    if (result == CUDA_SUCCESS) {
      *pitchedDevPtr =
          cudaPitchedPtr{reinterpret_cast<void*>(address), pitch, extent.width, extent.height};
    }
    return result;
  });
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuMemGetInfo(free, total); });
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  auto address = reinterpret_cast<CUdeviceptr>(ptr);
  unsigned int memory_type = 0;
  // Memory the driver does not know is plain pageable host memory: since
  // CUDA 11 that is a successful answer, not cudaErrorInvalidValue.
  if (api->cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) !=
      CUDA_SUCCESS) {
    *attributes = cudaPointerAttributes{};
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = cudaInvalidDeviceId;
    attributes->hostPointer = const_cast<void*>(ptr);
    return cudaSuccess;
  }
  unsigned int is_managed = 0;
  api->cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address);
  int device = cudaInvalidDeviceId;
  api->cuPointerGetAttribute(&device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address);
  CUdeviceptr device_pointer = 0;
  api->cuPointerGetAttribute(&device_pointer, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, address);
  void* host_pointer = nullptr;
  api->cuPointerGetAttribute(&host_pointer, CU_POINTER_ATTRIBUTE_HOST_POINTER, address);

  cudaMemoryType type = cudaMemoryTypeUnregistered;
  if (is_managed != 0) {
    type = cudaMemoryTypeManaged;
  } else if (memory_type == CU_MEMORYTYPE_DEVICE) {
    type = cudaMemoryTypeDevice;
  } else if (memory_type == CU_MEMORYTYPE_HOST) {
    type = cudaMemoryTypeHost;
  }
  *attributes = cudaPointerAttributes{};
  attributes->type = type;
  attributes->device = device;
  attributes->devicePointer = reinterpret_cast<void*>(device_pointer);
  attributes->hostPointer = host_pointer;
  return cudaSuccess;
}

}  // extern "C"
