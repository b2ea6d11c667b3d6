// cuMemsetD8/D16/D32 and their 2D forms, synchronous (+_ptds) and async (+_ptsz).
#include <cstring>

#include "api_guard.h"
#include "copy_engine.h"
#include "simgpu_tools.h"
#include "driver_state.h"
#include "memory.h"

using namespace simgpu;

namespace {

void fill_row(uintptr_t first, size_t elements, unsigned value, unsigned element_bytes) {
  switch (element_bytes) {
    case 1:
      std::memset(reinterpret_cast<void*>(first), int(value & 0xff), elements);
      break;
    case 2: {
      auto* row = reinterpret_cast<uint16_t*>(first);
      for (size_t i = 0; i < elements; ++i) row[i] = uint16_t(value);
      break;
    }
    default: {
      auto* row = reinterpret_cast<uint32_t*>(first);
      for (size_t i = 0; i < elements; ++i) row[i] = value;
      break;
    }
  }
}

CUresult memset_2d(Api api, CUstream handle, CUdeviceptr dst, size_t pitch, unsigned value, unsigned element_bytes,
                   size_t width_elements, size_t height) {
  CUstream_st* stream = nullptr;
  if (CUresult result = stream_for(api, handle, stream); result != CUDA_SUCCESS) return result;
  if (width_elements == 0 || height == 0) return CUDA_SUCCESS;
  const size_t row_bytes = width_elements * element_bytes;
  if (!dst || dst % element_bytes != 0) return CUDA_ERROR_INVALID_VALUE;
  if (height > 1 && (pitch < row_bytes || pitch % element_bytes != 0)) return CUDA_ERROR_INVALID_VALUE;
  const size_t span = (height - 1) * pitch + row_bytes;
  MemoryRange range;
  if (CUresult result = find_device_accessible(dst, span, range); result != CUDA_SUCCESS) return result;
  Transfer transfer;
  transfer.kind = CopyKind::kMemset;
  transfer.dst_kind = SIMGPU_TOOLS_DEVICE;
  transfer.bytes = row_bytes * height;
  transfer.dst = dst;
  // Documented: synchronous memsets are asynchronous to the host unless the
  // target is pinned host memory or managed memory.
  transfer.wait_for_completion = is_sync(api) && (is_host_memory(range.kind) || range.kind == MemoryKind::kManaged);
  transfer.effect = [dst, pitch, value, element_bytes, width_elements, height] {
    for (size_t row = 0; row < height; ++row) fill_row(dst + row * pitch, width_elements, value, element_bytes);
  };
  return run_transfer(stream, std::move(transfer));
}

CUresult memset_1d(Api api, CUstream handle, CUdeviceptr dst, unsigned value, unsigned element_bytes, size_t count) {
  return memset_2d(api, handle, dst, count * element_bytes, value, element_bytes, count, 1);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return api_call([&] { return memset_1d(Api::kSync, nullptr, dstDevice, uc, 1, N); });
}
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr dstDevice, unsigned char uc, size_t N) {
  return api_call([&] { return memset_1d(Api::kSyncPerThread, nullptr, dstDevice, uc, 1, N); });
}
CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return api_call([&] { return memset_1d(Api::kSync, nullptr, dstDevice, us, 2, N); });
}
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr dstDevice, unsigned short us, size_t N) {
  return api_call([&] { return memset_1d(Api::kSyncPerThread, nullptr, dstDevice, us, 2, N); });
}
CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return api_call([&] { return memset_1d(Api::kSync, nullptr, dstDevice, ui, 4, N); });
}
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N) {
  return api_call([&] { return memset_1d(Api::kSyncPerThread, nullptr, dstDevice, ui, 4, N); });
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return api_call([&] { return memset_1d(Api::kAsync, hStream, dstDevice, uc, 1, N); });
}
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream) {
  return api_call([&] { return memset_1d(Api::kAsyncPerThread, hStream, dstDevice, uc, 1, N); });
}
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return api_call([&] { return memset_1d(Api::kAsync, hStream, dstDevice, us, 2, N); });
}
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream) {
  return api_call([&] { return memset_1d(Api::kAsyncPerThread, hStream, dstDevice, us, 2, N); });
}
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return api_call([&] { return memset_1d(Api::kAsync, hStream, dstDevice, ui, 4, N); });
}
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream) {
  return api_call([&] { return memset_1d(Api::kAsyncPerThread, hStream, dstDevice, ui, 4, N); });
}

CUresult CUDAAPI cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                 size_t Height) {
  return api_call([&] { return memset_2d(Api::kSync, nullptr, dstDevice, dstPitch, uc, 1, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D8_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                      size_t Height) {
  return api_call([&] { return memset_2d(Api::kSyncPerThread, nullptr, dstDevice, dstPitch, uc, 1, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                  size_t Height) {
  return api_call([&] { return memset_2d(Api::kSync, nullptr, dstDevice, dstPitch, us, 2, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D16_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                       size_t Height) {
  return api_call([&] { return memset_2d(Api::kSyncPerThread, nullptr, dstDevice, dstPitch, us, 2, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                  size_t Height) {
  return api_call([&] { return memset_2d(Api::kSync, nullptr, dstDevice, dstPitch, ui, 4, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D32_v2_ptds(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                       size_t Height) {
  return api_call([&] { return memset_2d(Api::kSyncPerThread, nullptr, dstDevice, dstPitch, ui, 4, Width, Height); });
}

CUresult CUDAAPI cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                   size_t Height, CUstream hStream) {
  return api_call([&] { return memset_2d(Api::kAsync, hStream, dstDevice, dstPitch, uc, 1, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D8Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width,
                                        size_t Height, CUstream hStream) {
  return api_call([&] { return memset_2d(Api::kAsyncPerThread, hStream, dstDevice, dstPitch, uc, 1, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                    size_t Height, CUstream hStream) {
  return api_call([&] { return memset_2d(Api::kAsync, hStream, dstDevice, dstPitch, us, 2, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D16Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width,
                                         size_t Height, CUstream hStream) {
  return api_call([&] { return memset_2d(Api::kAsyncPerThread, hStream, dstDevice, dstPitch, us, 2, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                    size_t Height, CUstream hStream) {
  return api_call([&] { return memset_2d(Api::kAsync, hStream, dstDevice, dstPitch, ui, 4, Width, Height); });
}
CUresult CUDAAPI cuMemsetD2D32Async_ptsz(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width,
                                         size_t Height, CUstream hStream) {
  return api_call([&] { return memset_2d(Api::kAsyncPerThread, hStream, dstDevice, dstPitch, ui, 4, Width, Height); });
}

}  // extern "C"
