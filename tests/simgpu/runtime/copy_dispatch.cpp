#include "copy_dispatch.h"

#include "errors.h"

namespace simgpu_runtime {
namespace {

MemorySide side_of(const DriverApi& api, const void* pointer) {
  unsigned int memory_type = 0;
  CUresult result = api.cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                              reinterpret_cast<CUdeviceptr>(pointer));
  if (result != CUDA_SUCCESS) return MemorySide::host;
  switch (memory_type) {
    case CU_MEMORYTYPE_DEVICE:
      return MemorySide::device;
    case CU_MEMORYTYPE_HOST:
      return MemorySide::host;
    default:
      return MemorySide::unified;
  }
}

CUdeviceptr device_address(const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); }

}  // namespace

cudaError_t copy_sides(const DriverApi& api, cudaMemcpyKind kind, void* destination,
                       const void* source, CopySides* sides) {
  switch (kind) {
    case cudaMemcpyHostToHost:
      *sides = CopySides{MemorySide::host, MemorySide::host};
      return cudaSuccess;
    case cudaMemcpyHostToDevice:
      *sides = CopySides{MemorySide::host, MemorySide::device};
      return cudaSuccess;
    case cudaMemcpyDeviceToHost:
      *sides = CopySides{MemorySide::device, MemorySide::host};
      return cudaSuccess;
    case cudaMemcpyDeviceToDevice:
      *sides = CopySides{MemorySide::device, MemorySide::device};
      return cudaSuccess;
    case cudaMemcpyDefault:
      *sides = CopySides{side_of(api, source), side_of(api, destination)};
      return cudaSuccess;
  }
  return cudaErrorInvalidMemcpyDirection;
}

cudaError_t copy_linear(const DriverApi& api, void* destination, const void* source,
                        std::size_t bytes, cudaMemcpyKind kind, const cudaStream_t* stream) {
  CopySides sides{};
  if (cudaError_t error = copy_sides(api, kind, destination, source, &sides)) return error;
  if (bytes == 0) return cudaSuccess;
  CUresult result = CUDA_SUCCESS;
  const bool is_async = stream != nullptr;
  if (sides.source == MemorySide::host && sides.destination == MemorySide::device) {
    result = is_async ? api.cuMemcpyHtoDAsync(device_address(destination), source, bytes, *stream)
                      : api.cuMemcpyHtoD(device_address(destination), source, bytes);
  } else if (sides.source == MemorySide::device && sides.destination == MemorySide::host) {
    result = is_async ? api.cuMemcpyDtoHAsync(destination, device_address(source), bytes, *stream)
                      : api.cuMemcpyDtoH(destination, device_address(source), bytes);
  } else if (sides.source == MemorySide::device && sides.destination == MemorySide::device) {
    result = is_async
                 ? api.cuMemcpyDtoDAsync(device_address(destination), device_address(source), bytes,
                                         *stream)
                 : api.cuMemcpyDtoD(device_address(destination), device_address(source), bytes);
  } else {
    // Host-to-host, or managed memory on either side: the unified copy.
    result = is_async ? api.cuMemcpyAsync(device_address(destination), device_address(source),
                                          bytes, *stream)
                      : api.cuMemcpy(device_address(destination), device_address(source), bytes);
  }
  return runtime_error_from(result);
}

}  // namespace simgpu_runtime
