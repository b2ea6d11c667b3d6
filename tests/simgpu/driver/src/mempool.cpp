#include "mempool.h"

#include "capture.h"

#include "api_guard.h"
#include "context.h"
#include "driver_state.h"
#include "memory.h"

namespace simgpu {
namespace {

// Caller holds pool.mutex.
void release_unused_locked(CUmemPoolHandle_st& pool, uint64_t keep_bytes) {
  for (auto it = pool.unused_blocks.begin(); it != pool.unused_blocks.end() && pool.reserved_bytes > keep_bytes;) {
    unmap_backing_memory(reinterpret_cast<void*>(it->second), it->first);
    pool.reserved_bytes -= it->first;
    pool.device->release_bytes(it->first);
    it = pool.unused_blocks.erase(it);
  }
}

// Returns a block whose user no longer has it (registry entry already gone).
void return_block(CUmemPoolHandle_st& pool, uintptr_t base, size_t block_bytes) {
  std::lock_guard lock(pool.mutex);
  pool.used_bytes -= block_bytes;
  if (pool.destroyed) {
    unmap_backing_memory(reinterpret_cast<void*>(base), block_bytes);
    pool.reserved_bytes -= block_bytes;
    pool.device->release_bytes(block_bytes);
    return;
  }
  pool.unused_blocks.emplace(block_bytes, base);
}


CUresult allocate_async(CUdeviceptr* dptr, size_t bytes, CUmemoryPool pool, CUstream hStream, NullStream null_means) {
  if (!dptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (!pool) pool = stream->context->device->current_pool.load();
  if (!state().pools.contains(pool)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult result = check_capture_submit(stream, false); result != CUDA_SUCCESS) return result;
  const CUresult result = allocate_from_pool(*pool, bytes, *dptr);
  if (result == CUDA_SUCCESS) capture_allocation(stream, *dptr, bytes, pool->device->ordinal);
  return result;
}

// The pointer stops being valid for new work at once; its memory goes back
// when the stream reaches the free, after all earlier work on that stream.
CUresult free_async(CUdeviceptr dptr, CUstream hStream, NullStream null_means) {
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult captured = CUDA_SUCCESS; capture_free(stream, dptr, captured)) return captured;
  auto erased = state().memory.erase(dptr, [](const MemoryRange& range) {
    return range.kind == MemoryKind::kPoolBlock || range.kind == MemoryKind::kDevice;
  });
  if (!erased) return CUDA_ERROR_INVALID_VALUE;
  MemoryRange range = *erased;
  StreamOperation op;
  op.effect = [range] {
    if (range.kind == MemoryKind::kPoolBlock) {
      return_block(*range.pool, range.base, range.bytes);
    } else {
      release_backing(range);
    }
  };
  submit(stream, std::move(op));
  return CUDA_SUCCESS;
}

CUmemPoolHandle_st* new_pool(Device& device, bool is_default) {
  auto* pool = new CUmemPoolHandle_st;
  pool->device = &device;
  pool->is_default = is_default;
  state().pools.insert(pool);
  return pool;
}

}  // namespace

CUresult allocate_from_pool(CUmemPoolHandle_st& pool, size_t bytes, CUdeviceptr& address) {
  const size_t block_bytes = round_up(bytes, kAllocationGranularityBytes);
  uintptr_t base = 0;
  {
    std::lock_guard lock(pool.mutex);
    if (pool.destroyed) return CUDA_ERROR_INVALID_VALUE;
    if (auto reusable = pool.unused_blocks.find(block_bytes); reusable != pool.unused_blocks.end()) {
      base = reusable->second;
      pool.unused_blocks.erase(reusable);
    } else {
      if (!pool.device->reserve_bytes(block_bytes)) {
        release_unused_locked(pool, 0);
        if (!pool.device->reserve_bytes(block_bytes)) return CUDA_ERROR_OUT_OF_MEMORY;
      }
      void* backing = map_backing_memory(block_bytes);
      if (!backing) {
        pool.device->release_bytes(block_bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
      }
      base = reinterpret_cast<uintptr_t>(backing);
      pool.reserved_bytes += block_bytes;
      pool.reserved_high_bytes = std::max(pool.reserved_high_bytes, pool.reserved_bytes);
    }
    pool.used_bytes += block_bytes;
    pool.used_high_bytes = std::max(pool.used_high_bytes, pool.used_bytes);
  }
  MemoryRange range;
  range.base = base;
  range.bytes = block_bytes;
  range.kind = MemoryKind::kPoolBlock;
  range.device = pool.device->ordinal;
  range.pool = &pool;
  range.buffer_id = state().new_id();
  state().memory.insert(range);
  address = base;
  return CUDA_SUCCESS;
}

void create_default_pool(Device& device) {
  device.default_pool = new_pool(device, true);
  device.current_pool.store(device.default_pool);
}

CUresult free_pool_block_now(CUdeviceptr address) {
  auto erased =
      state().memory.erase(address, [](const MemoryRange& range) { return range.kind == MemoryKind::kPoolBlock; });
  if (!erased) return CUDA_ERROR_INVALID_VALUE;
  return_block(*erased->pool, erased->base, erased->bytes);
  return CUDA_SUCCESS;
}

void trim_pools_after_synchronize() {
  state().pools.for_each([](CUmemPoolHandle_st* pool) {
    std::lock_guard lock(pool->mutex);
    release_unused_locked(*pool, pool->release_threshold_bytes);
  });
}

}  // namespace simgpu

using namespace simgpu;

namespace {

CUresult set_pool_attribute(CUmemPoolHandle_st& pool, CUmemPool_attribute attr, void* value) {
  std::lock_guard lock(pool.mutex);
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      pool.reuse_follow_event_dependencies = *static_cast<int*>(value);
      break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      pool.reuse_allow_opportunistic = *static_cast<int*>(value);
      break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      pool.reuse_allow_internal_dependencies = *static_cast<int*>(value);
      break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      pool.release_threshold_bytes = *static_cast<cuuint64_t*>(value);
      break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      if (*static_cast<cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
      pool.reserved_high_bytes = pool.reserved_bytes;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      if (*static_cast<cuuint64_t*>(value) != 0) return CUDA_ERROR_INVALID_VALUE;
      pool.used_high_bytes = pool.used_bytes;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult get_pool_attribute(CUmemPoolHandle_st& pool, CUmemPool_attribute attr, void* value) {
  std::lock_guard lock(pool.mutex);
  switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
      *static_cast<int*>(value) = pool.reuse_follow_event_dependencies;
      break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
      *static_cast<int*>(value) = pool.reuse_allow_opportunistic;
      break;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
      *static_cast<int*>(value) = pool.reuse_allow_internal_dependencies;
      break;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
      *static_cast<cuuint64_t*>(value) = pool.release_threshold_bytes;
      break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
      *static_cast<cuuint64_t*>(value) = pool.reserved_bytes;
      break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
      *static_cast<cuuint64_t*>(value) = pool.reserved_high_bytes;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
      *static_cast<cuuint64_t*>(value) = pool.used_bytes;
      break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
      *static_cast<cuuint64_t*>(value) = pool.used_high_bytes;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return api_call([&] { return allocate_async(dptr, bytesize, nullptr, hStream, NullStream::kLegacy); });
}
CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
  return api_call([&] { return allocate_async(dptr, bytesize, nullptr, hStream, NullStream::kPerThread); });
}
CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  return api_call([&] {
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    return allocate_async(dptr, bytesize, pool, hStream, NullStream::kLegacy);
  });
}
CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream) {
  return api_call([&] {
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    return allocate_async(dptr, bytesize, pool, hStream, NullStream::kPerThread);
  });
}
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  return api_call([&] { return free_async(dptr, hStream, NullStream::kLegacy); });
}
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
  return api_call([&] { return free_async(dptr, hStream, NullStream::kPerThread); });
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
  return api_call([&] {
    if (!pool_out) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    *pool_out = device->default_pool;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
  return api_call([&] {
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    *pool = device->current_pool.load();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  return api_call([&] {
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    if (!pool || !state().pools.contains(pool) || pool->device != device) return CUDA_ERROR_INVALID_VALUE;
    device->current_pool.store(pool);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
  return api_call([&] {
    if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    Device* device = find_device(poolProps->location.id);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    if (poolProps->handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_NOT_SUPPORTED;
    *pool = new_pool(*device, false);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) {
  return api_call([&] {
    if (!pool || !state().pools.contains(pool) || pool->is_default) return CUDA_ERROR_INVALID_VALUE;
    Device* device = pool->device;
    CUmemPoolHandle_st* expected = pool;
    device->current_pool.compare_exchange_strong(expected, device->default_pool);
    state().pools.erase(pool);
    // Outstanding blocks are released directly when freed; the object stays
    // allocated for them (and for stale handles).
    std::lock_guard lock(pool->mutex);
    pool->destroyed = true;
    release_unused_locked(*pool, 0);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
  return api_call([&] {
    if (!pool || !state().pools.contains(pool)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(pool->mutex);
    release_unused_locked(*pool, minBytesToKeep);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  return api_call([&] {
    if (!pool || !value || !state().pools.contains(pool)) return CUDA_ERROR_INVALID_VALUE;
    return set_pool_attribute(*pool, attr, value);
  });
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
  return api_call([&] {
    if (!pool || !value || !state().pools.contains(pool)) return CUDA_ERROR_INVALID_VALUE;
    // Potentially unsafe: on an H200 (driver 580) a query of
    // CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT during a global-mode capture, from
    // the capturing thread or another one in global mode, returned
    // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidated the capture (in
    // relaxed mode it succeeded).
    if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
    return get_pool_attribute(*pool, attr, value);
  });
}

}  // extern "C"
