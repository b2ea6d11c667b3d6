// Copies to and from __device__/__constant__/__managed__ variables, named by
// the address of their host shadow (what nvcc registered with
// __cudaRegisterVar). The device address comes from the loaded fatbin
// (cuLibraryGetGlobal / cuLibraryGetManaged) in the current context.
#include <cuda_runtime_api.h>

#include "context.h"
#include "copy_dispatch.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "registry.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

namespace {

cudaError_t symbol_range(const DriverApi& api, const void* symbol, size_t count, size_t offset,
                         char** start) {
  CUdeviceptr address = 0;
  size_t bytes = 0;
  if (cudaError_t error = variable_address(&api, symbol, &address, &bytes)) return error;
  if (offset > bytes || count > bytes - offset) return cudaErrorInvalidValue;
  *start = reinterpret_cast<char*>(address) + offset;
  return cudaSuccess;
}

cudaError_t to_symbol(DefaultStream mode, const void* symbol, const void* src, size_t count,
                      size_t offset, cudaMemcpyKind kind, const cudaStream_t* stream) {
  if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault) {
    return finish(cudaErrorInvalidMemcpyDirection);
  }
  return with_context(mode, [&](const DriverApi& api) {
    char* start = nullptr;
    if (cudaError_t error = symbol_range(api, symbol, count, offset, &start)) return error;
    return copy_linear(api, start, src, count, kind, stream);
  });
}

cudaError_t from_symbol(DefaultStream mode, void* dst, const void* symbol, size_t count,
                        size_t offset, cudaMemcpyKind kind, const cudaStream_t* stream) {
  if (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
      kind != cudaMemcpyDefault) {
    return finish(cudaErrorInvalidMemcpyDirection);
  }
  return with_context(mode, [&](const DriverApi& api) {
    char* start = nullptr;
    if (cudaError_t error = symbol_range(api, symbol, count, offset, &start)) return error;
    return copy_linear(api, dst, start, count, kind, stream);
  });
}

}  // namespace

extern "C" {

cudaError_t cudaMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                               enum cudaMemcpyKind kind) {
  return traced("cudaMemcpyToSymbol", [&] { return to_symbol(DefaultStream::legacy, symbol, src, count, offset, kind, nullptr); });
}
cudaError_t cudaMemcpyToSymbol_ptds(const void* symbol, const void* src, size_t count,
                                    size_t offset, enum cudaMemcpyKind kind) {
  return traced("cudaMemcpyToSymbol_ptds", [&] { return to_symbol(DefaultStream::per_thread, symbol, src, count, offset, kind, nullptr); });
}

cudaError_t cudaMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                 enum cudaMemcpyKind kind) {
  return traced("cudaMemcpyFromSymbol", [&] { return from_symbol(DefaultStream::legacy, dst, symbol, count, offset, kind, nullptr); });
}
cudaError_t cudaMemcpyFromSymbol_ptds(void* dst, const void* symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind) {
  return traced("cudaMemcpyFromSymbol_ptds", [&] { return from_symbol(DefaultStream::per_thread, dst, symbol, count, offset, kind, nullptr); });
}

cudaError_t cudaMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count,
                                    size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream) {
  return traced("cudaMemcpyToSymbolAsync", [&] { return to_symbol(DefaultStream::legacy, symbol, src, count, offset, kind, &stream); });
}
cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void* symbol, const void* src, size_t count,
                                         size_t offset, enum cudaMemcpyKind kind,
                                         cudaStream_t stream) {
  return traced("cudaMemcpyToSymbolAsync_ptsz", [&] { return to_symbol(DefaultStream::per_thread, symbol, src, count, offset, kind, &stream); });
}

cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t stream) {
  return traced("cudaMemcpyFromSymbolAsync", [&] { return from_symbol(DefaultStream::legacy, dst, symbol, count, offset, kind, &stream); });
}
cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void* dst, const void* symbol, size_t count,
                                           size_t offset, enum cudaMemcpyKind kind,
                                           cudaStream_t stream) {
  return traced("cudaMemcpyFromSymbolAsync_ptsz", [&] { return from_symbol(DefaultStream::per_thread, dst, symbol, count, offset, kind, &stream); });
}

cudaError_t cudaGetSymbolAddress(void** devPtr, const void* symbol) {
  if (devPtr == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    size_t bytes = 0;
    if (cudaError_t error = variable_address(&api, symbol, &address, &bytes)) return error;
    *devPtr = reinterpret_cast<void*>(address);
    return cudaSuccess;
  });
}

cudaError_t cudaGetSymbolSize(size_t* size, const void* symbol) {
  if (size == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUdeviceptr address = 0;
    return variable_address(&api, symbol, &address, size);
  });
}

}  // extern "C"
