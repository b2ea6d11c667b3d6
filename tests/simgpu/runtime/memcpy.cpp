// Linear copies and peer copies. The synchronous entry points come in a
// legacy and a _ptds flavour, the asynchronous ones in legacy and _ptsz; the
// flavour only decides which driver table (and so which driver variant) runs.
#include <cuda_runtime_api.h>

#include "context.h"
#include "copy_dispatch.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

namespace {

cudaError_t memcpy_sync(DefaultStream mode, void* dst, const void* src, size_t count,
                        cudaMemcpyKind kind) {
  return with_context(
      mode, [&](const DriverApi& api) { return copy_linear(api, dst, src, count, kind, nullptr); });
}

cudaError_t memcpy_async(DefaultStream mode, void* dst, const void* src, size_t count,
                         cudaMemcpyKind kind, cudaStream_t stream) {
  return with_context(
      mode, [&](const DriverApi& api) { return copy_linear(api, dst, src, count, kind, &stream); });
}

cudaError_t peer_contexts(const DriverApi& api, int dst_device, int src_device,
                          CUcontext* dst_context, CUcontext* src_context) {
  if (cudaError_t error = primary_context(&api, dst_device, dst_context)) return error;
  return primary_context(&api, src_device, src_context);
}

}  // namespace

extern "C" {

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  return traced("cudaMemcpy", [&] { return memcpy_sync(DefaultStream::legacy, dst, src, count, kind); });
}
cudaError_t cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  return traced("cudaMemcpy_ptds", [&] { return memcpy_sync(DefaultStream::per_thread, dst, src, count, kind); });
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  return traced("cudaMemcpyAsync", [&] { return memcpy_async(DefaultStream::legacy, dst, src, count, kind, stream); });
}
cudaError_t cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                 cudaStream_t stream) {
  return traced("cudaMemcpyAsync_ptsz", [&] { return memcpy_async(DefaultStream::per_thread, dst, src, count, kind, stream); });
}

cudaError_t cudaMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice, size_t count) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUcontext dst_context = nullptr;
    CUcontext src_context = nullptr;
    if (cudaError_t error = peer_contexts(api, dstDevice, srcDevice, &dst_context, &src_context)) {
      return error;
    }
    if (count == 0) return cudaSuccess;
    return runtime_error_from(api.cuMemcpyPeer(reinterpret_cast<CUdeviceptr>(dst), dst_context,
                                               reinterpret_cast<CUdeviceptr>(src), src_context,
                                               count));
  });
}

cudaError_t cudaMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                size_t count, cudaStream_t stream) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    CUcontext dst_context = nullptr;
    CUcontext src_context = nullptr;
    if (cudaError_t error = peer_contexts(api, dstDevice, srcDevice, &dst_context, &src_context)) {
      return error;
    }
    if (count == 0) return cudaSuccess;
    return runtime_error_from(api.cuMemcpyPeerAsync(reinterpret_cast<CUdeviceptr>(dst), dst_context,
                                                    reinterpret_cast<CUdeviceptr>(src), src_context,
                                                    count, stream));
  });
}

}  // extern "C"
