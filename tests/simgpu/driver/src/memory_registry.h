// Every address range the simulated driver knows about: device allocations
// (which are host memory, so copies really copy), pinned and registered host
// memory, pool blocks, VMM mappings and module globals. Copies, memsets and
// cuPointerGetAttribute(s) classify pointers through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <shared_mutex>
#include <vector>

#include "cuda_api.h"

struct CUmemPoolHandle_st;

namespace simgpu {

enum class MemoryKind : uint8_t {
  kDevice,          // cuMemAlloc, cuMemAllocPitch
  kManaged,         // cuMemAllocManaged
  kPoolBlock,       // cuMemAllocAsync, cuMemAllocFromPoolAsync
  kVmmMapping,      // cuMemMap of cuMemCreate memory
  kModuleGlobal,    // __device__ / __constant__ variables of a loaded module
  kPinnedHost,      // cuMemAllocHost, cuMemHostAlloc
  kRegisteredHost,  // cuMemHostRegister
};

struct MemoryRange {
  uintptr_t base = 0;
  size_t bytes = 0;
  MemoryKind kind = MemoryKind::kDevice;
  int device = -1;              // owning device; -1 for host memory
  CUctx_st* context = nullptr;  // allocating context (nullptr: not context-bound)
  unsigned host_flags = 0;      // CU_MEMHOSTALLOC_* / CU_MEMHOSTREGISTER_*
  CUmemPoolHandle_st* pool = nullptr;
  unsigned long long buffer_id = 0;
  unsigned long long access = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;  // VMM mappings: cuMemSetAccess
  uintptr_t allocation_base = 0;           // VMM: start of the reserved range this mapping lies in
  unsigned long long physical_handle = 0;  // VMM: the cuMemCreate handle mapped here

  uintptr_t end() const { return base + bytes; }
};

inline bool is_host_memory(MemoryKind kind) {
  return kind == MemoryKind::kPinnedHost || kind == MemoryKind::kRegisteredHost;
}

class MemoryRegistry {
 public:
  // Adds a range; false if it overlaps one already known.
  bool insert(const MemoryRange& range);
  // The range containing `address`.
  std::optional<MemoryRange> find(uintptr_t address) const;
  // The range containing all of [address, address + bytes), if one does.
  std::optional<MemoryRange> find_covering(uintptr_t address, size_t bytes) const;
  // Removes the range starting exactly at `base` if `accept` agrees.
  std::optional<MemoryRange> erase(uintptr_t base, const std::function<bool(const MemoryRange&)>& accept);
  // Removes and returns every range for which `select` is true.
  std::vector<MemoryRange> erase_all(const std::function<bool(const MemoryRange&)>& select);
  // Applies `change` to the range starting at `base`; false if there is none.
  bool update(uintptr_t base, const std::function<void(MemoryRange&)>& change);
  std::vector<MemoryRange> ranges_within(uintptr_t begin, uintptr_t end) const;

 private:
  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, MemoryRange> ranges_;  // by base
};

// Backing store for simulated device and pinned memory: anonymous, lazily
// committed mappings, so a large simulated device costs nothing until touched.
void* map_backing_memory(size_t bytes);
void unmap_backing_memory(void* address, size_t bytes);

}  // namespace simgpu
