// cuPointerGetAttribute(s): what a pointer is (the profiler can tell pinned from
// pageable host memory this way), plus the unified-memory hints that are no-ops.
#include <cstring>

#include "api_guard.h"
#include "context.h"
#include "driver_state.h"
#include "memory.h"

using namespace simgpu;

namespace {

template <class T>
void store(void* data, T value) {
  std::memcpy(data, &value, sizeof(T));
}

CUctx_st* owning_context(const MemoryRange& range) {
  if (range.context) return range.context;
  Device* device = find_device(range.device);
  return device ? device->primary_context : nullptr;
}

// Writes one attribute of a known range. Booleans are written as C++ bool,
// the type cuda.h's documentation and the CUDA Python bindings use.
CUresult write_attribute(void* data, CUpointer_attribute attribute, const MemoryRange& range, CUdeviceptr ptr) {
  const bool host = is_host_memory(range.kind);
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      store(data, owning_context(range));
      break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      store(data, unsigned(host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE));
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      store(data, ptr);
      break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      if (!host && range.kind != MemoryKind::kManaged) return CUDA_ERROR_INVALID_VALUE;
      store(data, reinterpret_cast<void*>(ptr));
      break;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
      store(data, true);
      break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
      store(data, (unsigned long long)range.buffer_id);
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      store(data, range.kind == MemoryKind::kManaged);
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      store(data, int(range.device));
      break;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
      store(data, range.kind == MemoryKind::kDevice);
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      store(data, CUdeviceptr(range.allocation_base ? range.allocation_base : range.base));
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      store(data, size_t(range.bytes));
      break;
    case CU_POINTER_ATTRIBUTE_MAPPED:
      store(data, true);
      break;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
      store(data, (unsigned long long)0);
      break;
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
      store(data, false);
      break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      store(data, unsigned(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE));
      break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      store(data, CUmemoryPool(range.pool));
      break;
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      store(data, size_t(range.bytes));
      break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      store(data, reinterpret_cast<void*>(range.base));
      break;
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      store(data, (unsigned long long)range.buffer_id);
      break;
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
      store(data, false);
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // P2P tokens and anything newer
  }
  return CUDA_SUCCESS;
}

// The value cuPointerGetAttributes reports for a pointer the driver does not know.
void write_unknown_pointer_default(void* data, CUpointer_attribute attribute) {
  switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      store(data, CUcontext(nullptr));
      break;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      store(data, 0u);
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
      store(data, CUdeviceptr(0));
      break;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
      store(data, (void*)nullptr);
      break;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
      store(data, 0ull);
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      store(data, -2);
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      store(data, CUdeviceptr(0));
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
      store(data, size_t(0));
      break;
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
      store(data, 0u);
      break;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      store(data, CUmemoryPool(nullptr));
      break;
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
      store(data, (void*)nullptr);
      break;
    default:
      store(data, false);
      break;  // the boolean attributes
  }
}

// A prefetch is a zero-length operation in stream order: managed memory is
// host memory here, so there is nothing to move.
CUresult prefetch(CUdeviceptr devPtr, size_t count, CUstream hStream, NullStream null_means) {
  auto range = state().memory.find_covering(devPtr, count);
  if (!range || range->kind != MemoryKind::kManaged) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  submit(stream, StreamOperation{});
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
  return api_call([&] {
    if (!data) return CUDA_ERROR_INVALID_VALUE;
    auto range = state().memory.find(ptr);
    if (!range) return CUDA_ERROR_INVALID_VALUE;
    return write_attribute(data, attribute, *range, ptr);
  });
}

CUresult CUDAAPI cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes, void** data,
                                        CUdeviceptr ptr) {
  return api_call([&] {
    if (numAttributes == 0 || !attributes || !data) return CUDA_ERROR_INVALID_VALUE;
    auto range = state().memory.find(ptr);
    for (unsigned i = 0; i < numAttributes; ++i) {
      if (!data[i]) continue;
      if (!range) {
        write_unknown_pointer_default(data[i], attributes[i]);
      } else if (write_attribute(data[i], attributes[i], *range, ptr) != CUDA_SUCCESS) {
        write_unknown_pointer_default(data[i], attributes[i]);
      }
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuPointerSetAttribute(const void* value, CUpointer_attribute attribute, CUdeviceptr ptr) {
  return api_call([&] {
    if (!value || attribute != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) return CUDA_ERROR_INVALID_VALUE;
    return state().memory.find(ptr) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

// Unified memory hints: accepted for managed memory, no simulated effect.
CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location) {
  return api_call([&] {
    (void)advice;
    (void)location;
    auto range = state().memory.find_covering(devPtr, count);
    return range && range->kind == MemoryKind::kManaged ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

CUresult CUDAAPI cuMemAdvise(CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUdevice device) {
  CUmemLocation location{CU_MEM_LOCATION_TYPE_DEVICE, device};
  return cuMemAdvise_v2(devPtr, count, advice, location);
}

}  // extern "C"

extern "C" {

CUresult CUDAAPI cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) {
  return api_call([&] {
    (void)dstDevice;
    return prefetch(devPtr, count, hStream, NullStream::kLegacy);
  });
}
CUresult CUDAAPI cuMemPrefetchAsync_ptsz(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream) {
  return api_call([&] {
    (void)dstDevice;
    return prefetch(devPtr, count, hStream, NullStream::kPerThread);
  });
}
CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                                       CUstream hStream) {
  return api_call([&] {
    (void)location;
    (void)flags;
    return prefetch(devPtr, count, hStream, NullStream::kLegacy);
  });
}
CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                            unsigned int flags, CUstream hStream) {
  return api_call([&] {
    (void)location;
    (void)flags;
    return prefetch(devPtr, count, hStream, NullStream::kPerThread);
  });
}

}  // extern "C"
