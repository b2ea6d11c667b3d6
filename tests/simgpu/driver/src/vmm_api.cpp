// Virtual memory management: cuMemCreate makes physical memory (a memfd, so one
// allocation can really be mapped at several addresses), cuMemAddressReserve
// reserves address space, cuMemMap/cuMemUnmap/cuMemSetAccess map it with
// mmap/mprotect. Physical memory counts toward the device from cuMemCreate
// until it is both released and unmapped everywhere.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "api_guard.h"
#include "driver_state.h"
#include "memory.h"

using namespace simgpu;

namespace {

constexpr size_t kVmmGranularityBytes = 2u << 20;

struct PhysicalAllocation {
  Device* device = nullptr;
  size_t bytes = 0;
  int fd = -1;
  CUmemAllocationProp properties{};
  int references = 1;  // cuMemCreate and each cuMemRetainAllocationHandle
  int mappings = 0;
};

struct VmmState {
  std::mutex mutex;  // guards everything below and PhysicalAllocation counters
  std::map<unsigned long long, PhysicalAllocation*> allocations;
  std::map<uintptr_t, size_t> reservations;  // base -> bytes
};

VmmState& vmm() {
  static VmmState* instance = new VmmState;  // never destroyed, like all driver state
  return *instance;
}

// Caller holds vmm().mutex.
void destroy_if_unused_locked(unsigned long long handle) {
  auto it = vmm().allocations.find(handle);
  if (it == vmm().allocations.end()) return;
  PhysicalAllocation* physical = it->second;
  if (physical->references > 0 || physical->mappings > 0) return;
  close(physical->fd);
  physical->device->release_bytes(physical->bytes);
  vmm().allocations.erase(it);
  delete physical;
}

CUresult check_properties(const CUmemAllocationProp* prop, Device*& device) {
  if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  device = find_device(prop->location.id);
  return device ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

bool inside_reservation_locked(uintptr_t address, size_t bytes, uintptr_t& reservation_base) {
  auto it = vmm().reservations.upper_bound(address);
  if (it == vmm().reservations.begin()) return false;
  --it;
  if (address < it->first || address + bytes > it->first + it->second) return false;
  reservation_base = it->first;
  return true;
}

// The mappings that exactly tile [address, address + bytes), or nothing.
std::vector<MemoryRange> mappings_tiling(uintptr_t address, size_t bytes) {
  std::vector<MemoryRange> found;
  uintptr_t expected = address;
  for (const MemoryRange& range : state().memory.ranges_within(address, address + bytes)) {
    if (range.kind != MemoryKind::kVmmMapping || range.base != expected || range.end() > address + bytes) return {};
    found.push_back(range);
    expected = range.end();
  }
  if (expected != address + bytes) return {};
  return found;
}

int protection_for(unsigned long long access) {
  if (access == CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return PROT_READ | PROT_WRITE;
  if (access == CU_MEM_ACCESS_FLAGS_PROT_READ) return PROT_READ;
  return PROT_NONE;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                               CUmemAllocationGranularity_flags option) {
  return api_call([&] {
    Device* device = nullptr;
    if (!granularity) return CUDA_ERROR_INVALID_VALUE;
    if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (CUresult result = check_properties(prop, device); result != CUDA_SUCCESS) return result;
    *granularity = kVmmGranularityBytes;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop,
                             unsigned long long flags) {
  return api_call([&] {
    Device* device = nullptr;
    if (!handle || flags != 0 || size == 0 || size % kVmmGranularityBytes != 0) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult result = check_properties(prop, device); result != CUDA_SUCCESS) return result;
    if (prop->requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_NOT_SUPPORTED;
    if (!device->reserve_bytes(size)) return CUDA_ERROR_OUT_OF_MEMORY;
    int fd = memfd_create("simgpu-vmm", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, off_t(size)) != 0) {
      if (fd >= 0) close(fd);
      device->release_bytes(size);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    auto* physical = new PhysicalAllocation;
    physical->device = device;
    physical->bytes = size;
    physical->fd = fd;
    physical->properties = *prop;
    auto id = reinterpret_cast<unsigned long long>(physical);
    std::lock_guard lock(vmm().mutex);
    vmm().allocations.emplace(id, physical);
    *handle = id;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle) {
  return api_call([&] {
    std::lock_guard lock(vmm().mutex);
    auto it = vmm().allocations.find(handle);
    if (it == vmm().allocations.end() || it->second->references == 0) return CUDA_ERROR_INVALID_VALUE;
    --it->second->references;
    destroy_if_unused_locked(handle);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
  return api_call([&] {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    auto range = state().memory.find(reinterpret_cast<uintptr_t>(addr));
    if (!range || range->kind != MemoryKind::kVmmMapping) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(vmm().mutex);
    auto it = vmm().allocations.find(range->physical_handle);
    if (it == vmm().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    ++it->second->references;
    *handle = range->physical_handle;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                        CUmemGenericAllocationHandle handle) {
  return api_call([&] {
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(vmm().mutex);
    auto it = vmm().allocations.find(handle);
    if (it == vmm().allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    *prop = it->second->properties;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags) {
  return api_call([&] {
    if (!ptr || flags != 0 || size == 0 || size % kVmmGranularityBytes != 0) return CUDA_ERROR_INVALID_VALUE;
    if (alignment & (alignment - 1)) return CUDA_ERROR_INVALID_VALUE;
    alignment = std::max(alignment, kVmmGranularityBytes);
    // Over-reserve, then trim to the requested alignment.
    void* hint = reinterpret_cast<void*>(addr);
    void* mapped = mmap(hint, size + alignment, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapped == MAP_FAILED) return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t begin = reinterpret_cast<uintptr_t>(mapped);
    uintptr_t aligned = round_up(begin, alignment);
    if (aligned > begin) munmap(mapped, aligned - begin);
    uintptr_t tail = aligned + size;
    munmap(reinterpret_cast<void*>(tail), begin + size + alignment - tail);
    std::lock_guard lock(vmm().mutex);
    vmm().reservations.emplace(aligned, size);
    *ptr = aligned;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  return api_call([&] {
    std::lock_guard lock(vmm().mutex);
    auto it = vmm().reservations.find(ptr);
    if (it == vmm().reservations.end() || it->second != size) return CUDA_ERROR_INVALID_VALUE;
    if (!state().memory.ranges_within(ptr, ptr + size).empty()) return CUDA_ERROR_INVALID_VALUE;  // still mapped
    munmap(reinterpret_cast<void*>(ptr), size);
    vmm().reservations.erase(it);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags) {
  return api_call([&] {
    if (flags != 0 || size == 0 || size % kVmmGranularityBytes || offset % kVmmGranularityBytes ||
        ptr % kVmmGranularityBytes) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard lock(vmm().mutex);
    auto it = vmm().allocations.find(handle);
    if (it == vmm().allocations.end() || it->second->references == 0) return CUDA_ERROR_INVALID_HANDLE;
    PhysicalAllocation* physical = it->second;
    uintptr_t reservation_base = 0;
    if (offset + size > physical->bytes || !inside_reservation_locked(ptr, size, reservation_base)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    MemoryRange range;
    range.base = ptr;
    range.bytes = size;
    range.kind = MemoryKind::kVmmMapping;
    range.device = physical->device->ordinal;
    range.access = CU_MEM_ACCESS_FLAGS_PROT_NONE;  // until cuMemSetAccess
    range.allocation_base = reservation_base;
    range.physical_handle = handle;
    range.buffer_id = state().new_id();
    if (!state().memory.insert(range)) return CUDA_ERROR_INVALID_VALUE;  // already mapped
    void* mapped =
        mmap(reinterpret_cast<void*>(ptr), size, PROT_NONE, MAP_SHARED | MAP_FIXED, physical->fd, off_t(offset));
    if (mapped == MAP_FAILED) {
      state().memory.erase(ptr, [](const MemoryRange&) { return true; });
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    ++physical->mappings;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
  return api_call([&] {
    auto mappings = mappings_tiling(ptr, size);
    if (mappings.empty()) return CUDA_ERROR_INVALID_VALUE;
    // Queued copies may still use the mapping (the real driver synchronizes too).
    synchronize_device(find_device(mappings.front().device));
    std::lock_guard lock(vmm().mutex);
    for (const MemoryRange& mapping : mappings) {
      if (!state().memory.erase(mapping.base, [](const MemoryRange& r) { return r.kind == MemoryKind::kVmmMapping; })) {
        continue;  // unmapped concurrently
      }
      // Back to a plain reservation.
      mmap(reinterpret_cast<void*>(mapping.base), mapping.bytes, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
      auto it = vmm().allocations.find(mapping.physical_handle);
      if (it != vmm().allocations.end()) {
        --it->second->mappings;
        destroy_if_unused_locked(mapping.physical_handle);
      }
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
  return api_call([&] {
    if (!desc || count == 0) return CUDA_ERROR_INVALID_VALUE;
    // Host memory has one protection for all devices: the most permissive wins.
    unsigned long long access = CU_MEM_ACCESS_FLAGS_PROT_NONE;
    for (size_t i = 0; i < count; ++i) {
      if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE || !find_device(desc[i].location.id)) {
        return CUDA_ERROR_INVALID_DEVICE;
      }
      if (desc[i].flags > CU_MEM_ACCESS_FLAGS_PROT_READWRITE) return CUDA_ERROR_INVALID_VALUE;
      access = std::max<unsigned long long>(access, desc[i].flags);
    }
    auto mappings = mappings_tiling(ptr, size);
    if (mappings.empty()) return CUDA_ERROR_INVALID_VALUE;
    for (const MemoryRange& mapping : mappings) {
      mprotect(reinterpret_cast<void*>(mapping.base), mapping.bytes, protection_for(access));
      state().memory.update(mapping.base, [&](MemoryRange& range) { range.access = access; });
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemGetAccess(unsigned long long* flags, const CUmemLocation* location, CUdeviceptr ptr) {
  return api_call([&] {
    if (!flags || !location) return CUDA_ERROR_INVALID_VALUE;
    auto range = state().memory.find(ptr);
    if (!range || range->kind != MemoryKind::kVmmMapping) return CUDA_ERROR_INVALID_VALUE;
    *flags = range->access;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
