#include "preload/capture/live_set.h"

#include <atomic>
#include <mutex>
#include <new>
#include <unordered_map>

namespace proflaunch::capture {
namespace {

using format::AllocationKind;
using format::MemoryAction;

// Which name space a block's key lives in: allocations by address, the VMM
// address ranges and mappings by address each on their own, physical memory
// by handle. (A managed block is freed by cuMemFree, recorded as a device
// release: one name space for every kind of allocation.)
enum class Space : uint64_t { kAllocation = 0, kAddressRange = 1, kMapping = 2, kPhysical = 3 };

Space space_of(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kAddressRange: return Space::kAddressRange;
    case AllocationKind::kMapping: return Space::kMapping;
    case AllocationKind::kPhysical: return Space::kPhysical;
    default: return Space::kAllocation;
  }
}

struct Key {
  uint64_t space;
  uint64_t value;
  bool operator==(const Key& other) const { return space == other.space && value == other.value; }
};
struct KeyHash {
  size_t operator()(const Key& k) const { return static_cast<size_t>((k.value ^ (k.space << 61)) * 0x9E3779B97F4A7C15ull); }
};

Key key_of(const format::MemoryOperationRecord& r) {
  const Space space = space_of(static_cast<AllocationKind>(r.kind));
  return Key{static_cast<uint64_t>(space), space == Space::kPhysical ? r.handle : r.address};
}

std::atomic<bool> g_enabled{false};
std::mutex g_mutex;
// Never freed: allocation hooks may run during static destruction.
MemoryBlockSet* g_blocks = nullptr;
std::atomic<uint64_t> g_overflow{0};

}  // namespace

struct MemoryBlockSet::Map {
  std::unordered_map<Key, format::MemoryOperationRecord, KeyHash> blocks;
};

MemoryBlockSet::MemoryBlockSet() = default;
MemoryBlockSet::~MemoryBlockSet() = default;

bool MemoryBlockSet::note(const format::MemoryOperationRecord& r) noexcept {
  if (r.span.result != 0) return true;
  const auto action = static_cast<MemoryAction>(r.action);
  if (action != MemoryAction::kAcquire && action != MemoryAction::kRelease) return true;
  const Key key = key_of(r);
  if (key.value == 0) return true;
  try {
    if (map_ == nullptr) map_ = std::make_unique<Map>();
    if (action == MemoryAction::kAcquire) {
      format::MemoryOperationRecord& kept = map_->blocks[key] = r;
      kept.header = format::header_for<format::MemoryOperationRecord>();  // callers may build it off the ring
    } else {
      map_->blocks.erase(key);
    }
    return true;
  } catch (...) {
    return false;
  }
}

std::vector<format::MemoryOperationRecord> MemoryBlockSet::blocks() const {
  std::vector<format::MemoryOperationRecord> out;
  if (map_ == nullptr) return out;
  out.reserve(map_->blocks.size());
  for (const auto& [key, record] : map_->blocks) out.push_back(record);
  return out;
}

size_t MemoryBlockSet::size() const noexcept { return map_ == nullptr ? 0 : map_->blocks.size(); }

void MemoryBlockSet::clear() noexcept {
  if (map_ != nullptr) map_->blocks.clear();
}

void enable_live_set() noexcept { g_enabled.store(true, std::memory_order_release); }

bool follows_memory() noexcept { return g_enabled.load(std::memory_order_acquire); }

void note_memory_operation(const format::MemoryOperationRecord& r) noexcept {
  if (!follows_memory()) return;
  std::lock_guard lock(g_mutex);
  if (g_blocks == nullptr) g_blocks = new (std::nothrow) MemoryBlockSet();
  if (g_blocks == nullptr || !g_blocks->note(r)) g_overflow.fetch_add(1, std::memory_order_relaxed);
}

std::vector<format::MemoryOperationRecord> live_blocks() {
  std::lock_guard lock(g_mutex);
  if (g_blocks == nullptr) return {};
  return g_blocks->blocks();
}

uint64_t live_set_overflow() noexcept { return g_overflow.load(std::memory_order_relaxed); }

void live_set_lock_before_fork() noexcept { g_mutex.lock(); }
void live_set_unlock_after_fork() noexcept { g_mutex.unlock(); }

void live_set_reset_in_child() noexcept {
  if (g_blocks != nullptr) g_blocks->clear();
}

}  // namespace proflaunch::capture
