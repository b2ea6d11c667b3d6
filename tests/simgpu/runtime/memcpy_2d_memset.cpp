// Pitched 2D copies and byte memsets (1D and 2D), each in its legacy and
// per-thread (_ptds / _ptsz) flavour.
#include <cuda_runtime_api.h>

#include "context.h"
#include "copy_dispatch.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

namespace {

void describe_side(MemorySide side, const void* pointer, CUmemorytype* type, const void** host,
                   CUdeviceptr* device) {
  switch (side) {
    case MemorySide::host:
      *type = CU_MEMORYTYPE_HOST;
      *host = pointer;
      return;
    case MemorySide::device:
      *type = CU_MEMORYTYPE_DEVICE;
      *device = reinterpret_cast<CUdeviceptr>(pointer);
      return;
    case MemorySide::unified:
      *type = CU_MEMORYTYPE_UNIFIED;
      *device = reinterpret_cast<CUdeviceptr>(pointer);
      return;
  }
}

struct Copy2D {
  void* dst;
  size_t dpitch;
  const void* src;
  size_t spitch;
  size_t width_bytes;
  size_t height;
  cudaMemcpyKind kind;
};

cudaError_t copy_2d(DefaultStream mode, const Copy2D& copy, const cudaStream_t* stream) {
  if (copy.width_bytes > copy.dpitch || copy.width_bytes > copy.spitch) {
    return finish(cudaErrorInvalidPitchValue);
  }
  return with_context(mode, [&](const DriverApi& api) {
    CopySides sides{};
    if (cudaError_t error = copy_sides(api, copy.kind, copy.dst, copy.src, &sides)) return error;
    if (copy.width_bytes == 0 || copy.height == 0) return cudaSuccess;
    CUDA_MEMCPY2D parameters{};
    const void* unused_host = nullptr;
    describe_side(sides.source, copy.src, &parameters.srcMemoryType, &parameters.srcHost,
                  &parameters.srcDevice);
    describe_side(sides.destination, copy.dst, &parameters.dstMemoryType, &unused_host,
                  &parameters.dstDevice);
    parameters.dstHost = const_cast<void*>(unused_host);
    parameters.srcPitch = copy.spitch;
    parameters.dstPitch = copy.dpitch;
    parameters.WidthInBytes = copy.width_bytes;
    parameters.Height = copy.height;
    CUresult result = stream != nullptr ? api.cuMemcpy2DAsync(&parameters, *stream)
                                        : api.cuMemcpy2DUnaligned(&parameters);
    return runtime_error_from(result);
  });
}

cudaError_t memset_1d(DefaultStream mode, void* pointer, int value, size_t count,
                      const cudaStream_t* stream) {
  return with_context(mode, [&](const DriverApi& api) {
    auto address = reinterpret_cast<CUdeviceptr>(pointer);
    auto byte = static_cast<unsigned char>(value);
    if (count == 0) return CUDA_SUCCESS;
    return stream != nullptr ? api.cuMemsetD8Async(address, byte, count, *stream)
                             : api.cuMemsetD8(address, byte, count);
  });
}

cudaError_t memset_2d(DefaultStream mode, void* pointer, size_t pitch, int value, size_t width,
                      size_t height, const cudaStream_t* stream) {
  if (width > pitch) return finish(cudaErrorInvalidPitchValue);
  return with_context(mode, [&](const DriverApi& api) {
    auto address = reinterpret_cast<CUdeviceptr>(pointer);
    auto byte = static_cast<unsigned char>(value);
    if (width == 0 || height == 0) return CUDA_SUCCESS;
    return stream != nullptr ? api.cuMemsetD2D8Async(address, pitch, byte, width, height, *stream)
                             : api.cuMemsetD2D8(address, pitch, byte, width, height);
  });
}

}  // namespace

extern "C" {

cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                         size_t height, enum cudaMemcpyKind kind) {
  return copy_2d(DefaultStream::legacy, Copy2D{dst, dpitch, src, spitch, width, height, kind},
                 nullptr);
}
cudaError_t cudaMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind) {
  return copy_2d(DefaultStream::per_thread, Copy2D{dst, dpitch, src, spitch, width, height, kind},
                 nullptr);
}

cudaError_t cudaMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream) {
  return copy_2d(DefaultStream::legacy, Copy2D{dst, dpitch, src, spitch, width, height, kind},
                 &stream);
}
cudaError_t cudaMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch,
                                   size_t width, size_t height, enum cudaMemcpyKind kind,
                                   cudaStream_t stream) {
  return copy_2d(DefaultStream::per_thread, Copy2D{dst, dpitch, src, spitch, width, height, kind},
                 &stream);
}

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  return traced("cudaMemset", [&] { return memset_1d(DefaultStream::legacy, devPtr, value, count, nullptr); });
}
cudaError_t cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return traced("cudaMemset_ptds", [&] { return memset_1d(DefaultStream::per_thread, devPtr, value, count, nullptr); });
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return traced("cudaMemsetAsync", [&] { return memset_1d(DefaultStream::legacy, devPtr, value, count, &stream); });
}
cudaError_t cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return traced("cudaMemsetAsync_ptsz", [&] { return memset_1d(DefaultStream::per_thread, devPtr, value, count, &stream); });
}

cudaError_t cudaMemset2D(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return traced("cudaMemset2D", [&] { return memset_2d(DefaultStream::legacy, devPtr, pitch, value, width, height, nullptr); });
}
cudaError_t cudaMemset2D_ptds(void* devPtr, size_t pitch, int value, size_t width, size_t height) {
  return traced("cudaMemset2D_ptds", [&] { return memset_2d(DefaultStream::per_thread, devPtr, pitch, value, width, height, nullptr); });
}

cudaError_t cudaMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width, size_t height,
                              cudaStream_t stream) {
  return traced("cudaMemset2DAsync", [&] { return memset_2d(DefaultStream::legacy, devPtr, pitch, value, width, height, &stream); });
}
cudaError_t cudaMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width,
                                   size_t height, cudaStream_t stream) {
  return traced("cudaMemset2DAsync_ptsz", [&] { return memset_2d(DefaultStream::per_thread, devPtr, pitch, value, width, height, &stream); });
}

}  // extern "C"
