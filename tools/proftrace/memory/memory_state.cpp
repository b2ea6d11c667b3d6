#include "tools/proftrace/memory/memory_state.h"

#include <algorithm>

namespace proflaunch::tools::memory {

using format::AllocationKind;
using format::MemoryAction;

namespace {

bool is_host_kind(AllocationKind kind) {
  return kind == AllocationKind::kPinnedHost || kind == AllocationKind::kRegisteredHost;
}

// The counter of `totals` an allocation of `kind` adds to, and whether it
// is a block of allocated() (or of the host space's pinned()).
uint64_t* bytes_field(SpaceTotals& totals, AllocationKind kind, bool* counts_as_block) {
  *counts_as_block = true;
  switch (kind) {
    case AllocationKind::kDevice: return &totals.device_bytes;
    case AllocationKind::kPool: return &totals.pool_bytes;
    case AllocationKind::kMapping: return &totals.mapped_bytes;
    case AllocationKind::kPinnedHost: return &totals.pinned_bytes;
    case AllocationKind::kRegisteredHost: return &totals.registered_bytes;
    case AllocationKind::kManaged: *counts_as_block = false; return &totals.managed_bytes;
    default: *counts_as_block = false; return nullptr;
  }
}

}  // namespace

SpaceKey MemoryState::space_of(const MemoryEvent& event) const {
  return SpaceKey{event.section_id, is_host_kind(event.kind) ? kHostSpace : event.device};
}

const SpaceTotals* MemoryState::totals(const SpaceKey& key) const {
  auto found = spaces_.find(key);
  return found == spaces_.end() ? nullptr : &found->second;
}

void MemoryState::apply(const MemoryEvent& event) {
  ++counters_.events;
  SpaceKey space = space_of(event);
  if (!event.is_info) {
    SectionState& section = sections_[event.section_id];
    switch (event.action) {
      case MemoryAction::kAcquire:
        if (event.succeeded()) {
          space = acquire(section, event, space);
        } else {
          ++counters_.failed_acquires;
          if (observer_ != nullptr) observer_->on_failure(event, space, totals_of(space));
        }
        break;
      case MemoryAction::kRelease:
        if (event.succeeded()) space = release(section, event, space);
        else ++counters_.failed_releases;
        break;
      case MemoryAction::kTrim:
        if (event.succeeded()) {
          auto pool = section.pools.find(event.handle);
          if (pool != section.pools.end()) space = pool->second.space;
          update_pool(section, event.handle, space, 0, event.pool_reserved_bytes);
        }
        break;
      case MemoryAction::kSetAccess: break;
    }
  }
  if (observer_ != nullptr) observer_->on_event(event, space, totals_of(space));
}

void MemoryState::account(const Allocation& allocation, bool add) {
  SpaceTotals& totals = totals_of(SpaceKey{allocation.section_id, allocation.device});
  bool block = false;
  uint64_t* field = bytes_field(totals, allocation.kind, &block);
  if (field == nullptr) return;
  if (add) {
    *field += allocation.bytes;
    if (block) ++totals.live_blocks;
  } else {
    *field -= std::min(*field, allocation.bytes);
    if (block && totals.live_blocks > 0) --totals.live_blocks;
  }
}

SpaceKey MemoryState::acquire(SectionState& section, const MemoryEvent& event, const SpaceKey& space) {
  Allocation allocation;
  allocation.section_id = event.section_id;
  allocation.address = event.address;
  allocation.bytes = event.bytes;
  allocation.time_ns = event.time_ns;
  allocation.correlation_id = event.correlation_id;
  allocation.handle = event.handle;
  allocation.device = space.device;
  allocation.tid = event.tid;
  allocation.api = event.api;
  allocation.kind = event.kind;
  allocation.native_stack = event.native_stack;
  allocation.python_stack = event.python_stack;

  switch (event.kind) {
    case AllocationKind::kPhysical: {
      Physical& physical = section.physical[event.handle];
      if (physical.bytes > 0 && !physical.released) return space;  // a handle seen twice: keep the first
      physical = Physical{space, event.bytes, 0, false};
      totals_of(space).physical_bytes += event.bytes;
      return space;
    }
    case AllocationKind::kMapping: {
      auto physical = section.physical.find(event.handle);
      if (physical != section.physical.end()) {
        allocation.device = physical->second.space.device;
        ++physical->second.mappings;
      }
      if (auto old = section.mappings.find(event.address); old != section.mappings.end()) {
        // Mapped again without an unmap we saw: the old mapping is gone.
        forget(section, old->second, event.time_ns);
        section.mappings.erase(old);
      }
      section.mappings.emplace(event.address, allocation);
      break;
    }
    case AllocationKind::kAddressRange: return space;  // address space only, no memory
    default: {
      if (auto old = section.live.find(event.address); old != section.live.end()) {
        // The same address handed out twice: its free was not traced.
        forget(section, old->second, event.time_ns);
        section.live.erase(old);
      }
      section.live.emplace(event.address, allocation);
      if (event.kind == AllocationKind::kPool)
        update_pool(section, event.handle, space, static_cast<int64_t>(event.bytes), event.pool_reserved_bytes);
      break;
    }
  }
  ++counters_.allocations;
  account(allocation, true);
  if (observer_ != nullptr) observer_->on_allocation(allocation);
  return SpaceKey{allocation.section_id, allocation.device};
}

SpaceKey MemoryState::release(SectionState& section, const MemoryEvent& event, const SpaceKey& space) {
  switch (event.kind) {
    case AllocationKind::kPhysical: {
      auto physical = section.physical.find(event.handle);
      const SpaceKey changed = physical != section.physical.end() ? physical->second.space : space;
      release_physical(section, event.handle, true, false);
      return changed;
    }
    case AllocationKind::kMapping: {
      // One unmap may cover several mappings.
      SpaceKey changed = space;
      const uint64_t end = event.address + event.bytes;
      auto it = section.mappings.lower_bound(event.address);
      while (it != section.mappings.end() && it->first < end) {
        const Allocation mapping = it->second;
        it = section.mappings.erase(it);
        changed = SpaceKey{mapping.section_id, mapping.device};
        forget(section, mapping, event.time_ns);
        release_physical(section, mapping.handle, false, true);
      }
      return changed;
    }
    case AllocationKind::kAddressRange: return space;
    default: {
      auto found = section.live.find(event.address);
      if (found == section.live.end()) {
        if (event.address != 0) ++counters_.unknown_frees;  // freeing 0 is a documented no-op
        if (event.kind == AllocationKind::kPool)
          update_pool(section, event.handle, space, 0, event.pool_reserved_bytes);
        return space;
      }
      const Allocation allocation = found->second;
      section.live.erase(found);
      forget(section, allocation, event.time_ns);
      if (allocation.kind == AllocationKind::kPool) {
        const uint64_t handle = event.kind == AllocationKind::kPool && event.handle != 0 ? event.handle
                                                                                         : allocation.handle;
        const uint64_t reported = event.kind == AllocationKind::kPool ? event.pool_reserved_bytes
                                                                      : format::kPoolReservedUnknown;
        update_pool(section, handle, SpaceKey{allocation.section_id, allocation.device},
                    -static_cast<int64_t>(allocation.bytes), reported);
      }
      return SpaceKey{allocation.section_id, allocation.device};
    }
  }
}

void MemoryState::forget(SectionState&, Allocation allocation, uint64_t end_ns) {
  allocation.end_ns = end_ns;
  ++counters_.frees;
  account(allocation, false);
  if (observer_ != nullptr) observer_->on_free(allocation);
}

void MemoryState::update_pool(SectionState& section, uint64_t handle, const SpaceKey& space, int64_t live_delta,
                              uint64_t reported_bytes) {
  auto [it, inserted] = section.pools.try_emplace(handle);
  Pool& pool = it->second;
  if (inserted) pool.space = space;
  if (live_delta < 0) pool.live_bytes -= std::min<uint64_t>(pool.live_bytes, static_cast<uint64_t>(-live_delta));
  else pool.live_bytes += static_cast<uint64_t>(live_delta);
  if (reported_bytes != format::kPoolReservedUnknown) pool.reported_bytes = reported_bytes;
  const uint64_t counted = std::max(pool.reported_bytes, pool.live_bytes);
  SpaceTotals& totals = totals_of(pool.space);
  totals.pool_reserved_bytes = totals.pool_reserved_bytes - std::min(totals.pool_reserved_bytes, pool.counted_bytes) + counted;
  pool.counted_bytes = counted;
}

void MemoryState::release_physical(SectionState& section, uint64_t handle, bool released, bool unmapped) {
  auto found = section.physical.find(handle);
  if (found == section.physical.end()) return;
  Physical& physical = found->second;
  if (released) physical.released = true;
  if (unmapped && physical.mappings > 0) --physical.mappings;
  if (!physical.released || physical.mappings > 0) return;
  SpaceTotals& totals = totals_of(physical.space);
  totals.physical_bytes -= std::min(totals.physical_bytes, physical.bytes);
  section.physical.erase(found);
}

void MemoryState::for_each_live(const SpaceKey& key, const std::function<void(const Allocation&)>& visit) const {
  auto section = sections_.find(key.section_id);
  if (section == sections_.end()) return;
  for (const auto& [address, allocation] : section->second.live)
    if (allocation.device == key.device) visit(allocation);
  for (const auto& [address, allocation] : section->second.mappings)
    if (allocation.device == key.device) visit(allocation);
}

void MemoryState::for_each_live_in_section(uint64_t section_id,
                                           const std::function<void(const Allocation&)>& visit) const {
  auto section = sections_.find(section_id);
  if (section == sections_.end()) return;
  for (const auto& [address, allocation] : section->second.live) visit(allocation);
  for (const auto& [address, allocation] : section->second.mappings) visit(allocation);
}

}  // namespace proflaunch::tools::memory
