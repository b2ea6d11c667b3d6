// cuMemcpy*: every direction, synchronous (+_ptds) and asynchronous (+_ptsz).
// The rules for which calls block the host are in copy_engine.h.
#include <cstring>

#include "api_guard.h"
#include "copy_engine.h"
#include "driver_state.h"

using namespace simgpu;

namespace {

// What the entry point promises about its pointers.
enum class Declared { kHostToDevice, kDeviceToHost, kDeviceToDevice, kUnified };

bool device_addressable(const Endpoint& endpoint) { return endpoint.is_device || endpoint.is_pinned_host; }
bool pageable(const Endpoint& endpoint) { return !endpoint.is_device && !endpoint.is_pinned_host; }

bool must_wait(Api api, CopyKind kind, const Endpoint& dst, const Endpoint& src) {
  if (is_sync(api)) return kind != CopyKind::kDeviceToDevice && kind != CopyKind::kPeer;
  return pageable(dst) || pageable(src);
}

CUresult copy_linear(Api api, CUstream handle, uintptr_t dst, uintptr_t src, size_t bytes, Declared declared) {
  CUstream_st* stream = nullptr;
  if (CUresult result = stream_for(api, handle, stream); result != CUDA_SUCCESS) return result;
  if (bytes == 0) return CUDA_SUCCESS;
  if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
  Endpoint dst_end, src_end;
  if (CUresult result = classify_endpoint(dst, bytes, dst_end); result != CUDA_SUCCESS) return result;
  if (CUresult result = classify_endpoint(src, bytes, src_end); result != CUDA_SUCCESS) return result;
  bool dst_ok = declared == Declared::kDeviceToHost || declared == Declared::kUnified || device_addressable(dst_end);
  bool src_ok = declared == Declared::kHostToDevice || declared == Declared::kUnified || device_addressable(src_end);
  if (!dst_ok || !src_ok) return CUDA_ERROR_INVALID_VALUE;
  Transfer transfer;
  transfer.kind = copy_kind(dst_end, src_end);
  transfer.src_kind = tools_memory_kind(src_end);
  transfer.dst_kind = tools_memory_kind(dst_end);
  transfer.bytes = bytes;
  transfer.wait_for_completion = must_wait(api, transfer.kind, dst_end, src_end);
  transfer.asynchronous_call = !is_sync(api);
  transfer.effect = [dst, src, bytes] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  };
  return run_transfer(stream, std::move(transfer));
}

std::vector<CompletionRef> pending_work_of(CUctx_st* context) {
  std::vector<CompletionRef> pending;
  std::lock_guard lock(context->submit_mutex);
  for (CUstream_st* stream : context->streams) {
    if (stream->last_submitted && !stream->last_submitted->is_done()) pending.push_back(stream->last_submitted);
  }
  return pending;
}

// cuMemcpyPeer is documented as serialized with all pending and future work of
// the current, source and destination contexts. The simulator waits for their
// pending work and then blocks the host until the copy is done, which is
// stronger than the real driver (asynchronous to the host) but keeps every
// later operation behind it.
CUresult copy_peer(Api api, CUstream handle, CUdeviceptr dst, CUcontext dst_context, CUdeviceptr src,
                   CUcontext src_context, size_t bytes) {
  if (check_context(dst_context) != CUDA_SUCCESS || check_context(src_context) != CUDA_SUCCESS) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  CUstream_st* stream = nullptr;
  if (CUresult result = stream_for(api, handle, stream); result != CUDA_SUCCESS) return result;
  if (bytes == 0) return CUDA_SUCCESS;
  Endpoint dst_end, src_end;
  if (CUresult result = classify_endpoint(dst, bytes, dst_end); result != CUDA_SUCCESS) return result;
  if (CUresult result = classify_endpoint(src, bytes, src_end); result != CUDA_SUCCESS) return result;
  if (!dst_end.is_device || !src_end.is_device) return CUDA_ERROR_INVALID_VALUE;
  Transfer transfer;
  transfer.kind = copy_kind(dst_end, src_end);
  transfer.src_kind = tools_memory_kind(src_end);
  transfer.dst_kind = tools_memory_kind(dst_end);
  transfer.bytes = bytes;
  if (is_sync(api)) {
    transfer.wait_for_completion = true;
    for (CUctx_st* context : {dst_context, src_context}) {
      for (CompletionRef& pending : pending_work_of(context)) transfer.extra_waits.push_back(std::move(pending));
    }
  }
  transfer.effect = [dst, src, bytes] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  };
  return run_transfer(stream, std::move(transfer));
}

struct Plane {
  uintptr_t first_byte = 0;
  size_t pitch = 0;
};

CUresult plane_of(CUmemorytype type, const void* host, CUdeviceptr device, size_t x_bytes, size_t y, size_t pitch,
                  Plane& plane) {
  uintptr_t base = 0;
  switch (type) {
    case CU_MEMORYTYPE_HOST:
      base = reinterpret_cast<uintptr_t>(host);
      break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
      base = device;
      break;
    case CU_MEMORYTYPE_ARRAY:
      return CUDA_ERROR_NOT_SUPPORTED;  // CUDA arrays are not simulated
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  if (!base) return CUDA_ERROR_INVALID_VALUE;
  plane.first_byte = base + y * pitch + x_bytes;
  plane.pitch = pitch;
  return CUDA_SUCCESS;
}

CUresult copy_2d(Api api, CUstream handle, const CUDA_MEMCPY2D* copy) {
  if (!copy) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = stream_for(api, handle, stream); result != CUDA_SUCCESS) return result;
  const size_t width = copy->WidthInBytes, height = copy->Height;
  if (width == 0 || height == 0) return CUDA_SUCCESS;
  Plane dst, src;
  if (CUresult result = plane_of(copy->dstMemoryType, copy->dstHost, copy->dstDevice, copy->dstXInBytes, copy->dstY,
                                 copy->dstPitch, dst);
      result != CUDA_SUCCESS) {
    return result;
  }
  if (CUresult result = plane_of(copy->srcMemoryType, copy->srcHost, copy->srcDevice, copy->srcXInBytes, copy->srcY,
                                 copy->srcPitch, src);
      result != CUDA_SUCCESS) {
    return result;
  }
  if (height > 1 && (dst.pitch < width || src.pitch < width)) return CUDA_ERROR_INVALID_VALUE;
  const size_t dst_span = (height - 1) * dst.pitch + width, src_span = (height - 1) * src.pitch + width;
  Endpoint dst_end, src_end;
  if (CUresult result = classify_endpoint(dst.first_byte, dst_span, dst_end); result != CUDA_SUCCESS) return result;
  if (CUresult result = classify_endpoint(src.first_byte, src_span, src_end); result != CUDA_SUCCESS) return result;
  if ((copy->dstMemoryType == CU_MEMORYTYPE_DEVICE && !device_addressable(dst_end)) ||
      (copy->srcMemoryType == CU_MEMORYTYPE_DEVICE && !device_addressable(src_end))) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Transfer transfer;
  transfer.kind = copy_kind(dst_end, src_end);
  transfer.src_kind = tools_memory_kind(src_end);
  transfer.dst_kind = tools_memory_kind(dst_end);
  transfer.bytes = width * height;
  transfer.wait_for_completion = must_wait(api, transfer.kind, dst_end, src_end);
  transfer.asynchronous_call = !is_sync(api);
  transfer.effect = [dst, src, width, height] {
    for (size_t row = 0; row < height; ++row) {
      std::memmove(reinterpret_cast<void*>(dst.first_byte + row * dst.pitch),
                   reinterpret_cast<const void*>(src.first_byte + row * src.pitch), width);
    }
  };
  return run_transfer(stream, std::move(transfer));
}

uintptr_t address(const void* pointer) { return reinterpret_cast<uintptr_t>(pointer); }

}  // namespace

extern "C" {

// --- host to device
CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return api_call([&] {
    return copy_linear(Api::kSync, nullptr, dstDevice, address(srcHost), ByteCount, Declared::kHostToDevice);
  });
}
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount) {
  return api_call([&] {
    return copy_linear(Api::kSyncPerThread, nullptr, dstDevice, address(srcHost), ByteCount, Declared::kHostToDevice);
  });
}
CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream) {
  return api_call([&] {
    return copy_linear(Api::kAsync, hStream, dstDevice, address(srcHost), ByteCount, Declared::kHostToDevice);
  });
}
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount,
                                           CUstream hStream) {
  return api_call([&] {
    return copy_linear(Api::kAsyncPerThread, hStream, dstDevice, address(srcHost), ByteCount, Declared::kHostToDevice);
  });
}

// --- device to host
CUresult CUDAAPI cuMemcpyDtoH_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return api_call([&] {
    return copy_linear(Api::kSync, nullptr, address(dstHost), srcDevice, ByteCount, Declared::kDeviceToHost);
  });
}
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount) {
  return api_call([&] {
    return copy_linear(Api::kSyncPerThread, nullptr, address(dstHost), srcDevice, ByteCount, Declared::kDeviceToHost);
  });
}
CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return api_call([&] {
    return copy_linear(Api::kAsync, hStream, address(dstHost), srcDevice, ByteCount, Declared::kDeviceToHost);
  });
}
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream) {
  return api_call([&] {
    return copy_linear(Api::kAsyncPerThread, hStream, address(dstHost), srcDevice, ByteCount, Declared::kDeviceToHost);
  });
}

// --- device to device
CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return api_call(
      [&] { return copy_linear(Api::kSync, nullptr, dstDevice, srcDevice, ByteCount, Declared::kDeviceToDevice); });
}
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount) {
  return api_call([&] {
    return copy_linear(Api::kSyncPerThread, nullptr, dstDevice, srcDevice, ByteCount, Declared::kDeviceToDevice);
  });
}
CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                      CUstream hStream) {
  return api_call(
      [&] { return copy_linear(Api::kAsync, hStream, dstDevice, srcDevice, ByteCount, Declared::kDeviceToDevice); });
}
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,
                                           CUstream hStream) {
  return api_call([&] {
    return copy_linear(Api::kAsyncPerThread, hStream, dstDevice, srcDevice, ByteCount, Declared::kDeviceToDevice);
  });
}

// --- unified addressing: the direction follows from the pointers
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return api_call([&] { return copy_linear(Api::kSync, nullptr, dst, src, ByteCount, Declared::kUnified); });
}
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount) {
  return api_call([&] { return copy_linear(Api::kSyncPerThread, nullptr, dst, src, ByteCount, Declared::kUnified); });
}
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return api_call([&] { return copy_linear(Api::kAsync, hStream, dst, src, ByteCount, Declared::kUnified); });
}
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream) {
  return api_call([&] { return copy_linear(Api::kAsyncPerThread, hStream, dst, src, ByteCount, Declared::kUnified); });
}

// --- peer
CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                              size_t ByteCount) {
  return api_call(
      [&] { return copy_peer(Api::kSync, nullptr, dstDevice, dstContext, srcDevice, srcContext, ByteCount); });
}
CUresult CUDAAPI cuMemcpyPeer_ptds(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount) {
  return api_call(
      [&] { return copy_peer(Api::kSyncPerThread, nullptr, dstDevice, dstContext, srcDevice, srcContext, ByteCount); });
}
CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return api_call(
      [&] { return copy_peer(Api::kAsync, hStream, dstDevice, dstContext, srcDevice, srcContext, ByteCount); });
}
CUresult CUDAAPI cuMemcpyPeerAsync_ptsz(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                        CUcontext srcContext, size_t ByteCount, CUstream hStream) {
  return api_call([&] {
    return copy_peer(Api::kAsyncPerThread, hStream, dstDevice, dstContext, srcDevice, srcContext, ByteCount);
  });
}

// --- 2D (pitched) copies between host, device and unified memory
CUresult CUDAAPI cuMemcpy2D_v2(const CUDA_MEMCPY2D* pCopy) {
  return api_call([&] { return copy_2d(Api::kSync, nullptr, pCopy); });
}
CUresult CUDAAPI cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D* pCopy) {
  return api_call([&] { return copy_2d(Api::kSyncPerThread, nullptr, pCopy); });
}
CUresult CUDAAPI cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D* pCopy) {
  return api_call([&] { return copy_2d(Api::kSync, nullptr, pCopy); });
}
CUresult CUDAAPI cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D* pCopy) {
  return api_call([&] { return copy_2d(Api::kSyncPerThread, nullptr, pCopy); });
}
CUresult CUDAAPI cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return api_call([&] { return copy_2d(Api::kAsync, hStream, pCopy); });
}
CUresult CUDAAPI cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D* pCopy, CUstream hStream) {
  return api_call([&] { return copy_2d(Api::kAsyncPerThread, hStream, pCopy); });
}

}  // extern "C"
