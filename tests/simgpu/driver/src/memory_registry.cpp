#include "memory_registry.h"

#include "tools.h"

#include <sys/mman.h>

#include <mutex>

namespace simgpu {

bool MemoryRegistry::insert(const MemoryRange& range) {
  {
    std::unique_lock lock(mutex_);
    auto next = ranges_.lower_bound(range.base);
    if (next != ranges_.end() && next->first < range.end()) return false;
    if (next != ranges_.begin() && std::prev(next)->second.end() > range.base) return false;
    ranges_.emplace(range.base, range);
  }
  tools::memory(SIMGPU_TOOLS_MEMORY_ALLOCATED, range);
  return true;
}

std::optional<MemoryRange> MemoryRegistry::find(uintptr_t address) const {
  std::shared_lock lock(mutex_);
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return std::nullopt;
  --it;
  if (address >= it->second.end()) return std::nullopt;
  return it->second;
}

std::optional<MemoryRange> MemoryRegistry::find_covering(uintptr_t address, size_t bytes) const {
  auto range = find(address);
  if (!range || bytes > range->end() - address) return std::nullopt;
  return range;
}

std::optional<MemoryRange> MemoryRegistry::erase(uintptr_t base,
                                                 const std::function<bool(const MemoryRange&)>& accept) {
  MemoryRange range;
  {
    std::unique_lock lock(mutex_);
    auto it = ranges_.find(base);
    if (it == ranges_.end() || !accept(it->second)) return std::nullopt;
    range = it->second;
    ranges_.erase(it);
  }
  tools::memory(SIMGPU_TOOLS_MEMORY_RELEASED, range);
  return range;
}

std::vector<MemoryRange> MemoryRegistry::erase_all(const std::function<bool(const MemoryRange&)>& select) {
  std::vector<MemoryRange> removed;
  {
    std::unique_lock lock(mutex_);
    for (auto it = ranges_.begin(); it != ranges_.end();) {
      if (select(it->second)) {
        removed.push_back(it->second);
        it = ranges_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const MemoryRange& range : removed) tools::memory(SIMGPU_TOOLS_MEMORY_RELEASED, range);
  return removed;
}

bool MemoryRegistry::update(uintptr_t base, const std::function<void(MemoryRange&)>& change) {
  std::unique_lock lock(mutex_);
  auto it = ranges_.find(base);
  if (it == ranges_.end()) return false;
  change(it->second);
  return true;
}

std::vector<MemoryRange> MemoryRegistry::ranges_within(uintptr_t begin, uintptr_t end) const {
  std::shared_lock lock(mutex_);
  std::vector<MemoryRange> found;
  for (auto it = ranges_.lower_bound(begin); it != ranges_.end() && it->first < end; ++it) {
    found.push_back(it->second);
  }
  return found;
}

void* map_backing_memory(size_t bytes) {
  void* address =
      mmap(nullptr, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return address == MAP_FAILED ? nullptr : address;
}

void unmap_backing_memory(void* address, size_t bytes) { munmap(address, bytes ? bytes : 1); }

}  // namespace simgpu
