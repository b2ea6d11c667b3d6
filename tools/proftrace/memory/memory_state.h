// The memory a traced program holds, event by event: every live allocation,
// and per memory space (a device of a process, or that process's pinned host
// memory) the totals people ask about.
//
//   allocated  memory the program uses: cuMemAlloc/cuMemAllocPitch blocks,
//              stream-ordered allocations it holds (not what their pool
//              keeps for reuse), and VMM mappings (PyTorch's expandable
//              segments map physical memory as they grow)
//   reserved   memory the process holds from the driver: cuMemAlloc blocks,
//              what each pool has reserved (the pool's own figure, recorded
//              after every pool call, never less than what is allocated from
//              it), and VMM physical memory from cuMemCreate until it is both
//              released and unmapped
//   managed    cuMemAllocManaged, on its own (it may oversubscribe the device)
//   pinned     cuMemAllocHost/cuMemHostAlloc and cuMemHostRegister, in the
//              process's host space
//
// Events must come in time order per section (TimeOrderBuffer). Memory grows
// with the number of live allocations, never with the number of events.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::tools::memory {

// The host space of a process (pinned and registered host memory).
inline constexpr int32_t kHostSpace = -1000;

struct SpaceKey {
  uint64_t section_id = 0;
  int32_t device = 0;  // a device ordinal, -1 when a call had no context, or kHostSpace
  bool operator==(const SpaceKey& o) const { return section_id == o.section_id && device == o.device; }
  bool operator<(const SpaceKey& o) const {
    return section_id != o.section_id ? section_id < o.section_id : device < o.device;
  }
};

struct SpaceTotals {
  uint64_t device_bytes = 0;         // cuMemAlloc, cuMemAllocPitch
  uint64_t pool_bytes = 0;           // stream-ordered allocations held by the program
  uint64_t mapped_bytes = 0;         // VMM mappings
  uint64_t managed_bytes = 0;
  uint64_t pool_reserved_bytes = 0;  // what pools hold, at least pool_bytes
  uint64_t physical_bytes = 0;       // VMM physical memory held
  uint64_t pinned_bytes = 0;         // host space: cuMemAllocHost, cuMemHostAlloc
  uint64_t registered_bytes = 0;     // host space: cuMemHostRegister
  uint64_t live_blocks = 0;          // allocations counted in allocated() (or, host space, in pinned())

  uint64_t allocated() const { return device_bytes + pool_bytes + mapped_bytes; }
  uint64_t reserved() const { return device_bytes + pool_reserved_bytes + physical_bytes; }
  uint64_t pinned() const { return pinned_bytes + registered_bytes; }
};

// One allocation the program holds (or held: `end_ns` set once freed).
struct Allocation {
  uint64_t section_id = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t time_ns = 0;  // when the allocating call returned
  uint64_t end_ns = 0;   // when the freeing call returned; 0 while live
  uint64_t correlation_id = 0;
  uint64_t handle = 0;   // pool, or the physical memory of a mapping
  int32_t device = -1;   // the space's device (kHostSpace for host memory)
  uint32_t tid = 0;
  uint16_t api = 0;
  format::AllocationKind kind = format::AllocationKind::kDevice;
  uint32_t native_stack = 0;  // the allocating call's stacks, 0 when none
  uint32_t python_stack = 0;
};

// What the state tells its observer. Each event changes at most one space.
class MemoryObserver {
 public:
  virtual ~MemoryObserver() = default;
  // After every applied event: its space's totals (changed or not).
  virtual void on_event(const MemoryEvent&, const SpaceKey&, const SpaceTotals&) {}
  virtual void on_allocation(const Allocation&) {}
  // Called with end_ns set, before the allocation is forgotten.
  virtual void on_free(const Allocation&) {}
  // An acquire call that failed; totals are those at that moment.
  virtual void on_failure(const MemoryEvent&, const SpaceKey&, const SpaceTotals&) {}
};

struct StateCounters {
  uint64_t events = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failed_acquires = 0;
  uint64_t failed_releases = 0;
  uint64_t unknown_frees = 0;  // a successful free of an address never seen allocated
};

class MemoryState {
 public:
  explicit MemoryState(MemoryObserver* observer = nullptr) : observer_(observer) {}

  void apply(const MemoryEvent& event);

  const SpaceTotals* totals(const SpaceKey& key) const;
  const std::map<SpaceKey, SpaceTotals>& spaces() const { return spaces_; }
  const StateCounters& counters() const { return counters_; }

  // Live allocations of one space, or of every space of a section.
  void for_each_live(const SpaceKey& key, const std::function<void(const Allocation&)>& visit) const;
  void for_each_live_in_section(uint64_t section_id, const std::function<void(const Allocation&)>& visit) const;

 private:
  struct Pool {
    SpaceKey space;
    uint64_t live_bytes = 0;
    uint64_t reported_bytes = 0;  // the driver's figure; 0 until known
    uint64_t counted_bytes = 0;   // what this pool adds to its space's reserved
  };
  struct Physical {
    SpaceKey space;
    uint64_t bytes = 0;
    uint32_t mappings = 0;
    bool released = false;
  };
  struct SectionState {
    std::unordered_map<uint64_t, Allocation> live;  // by address (everything but mappings)
    std::map<uint64_t, Allocation> mappings;         // VMM mappings by address, for ranges
    std::unordered_map<uint64_t, Pool> pools;
    std::unordered_map<uint64_t, Physical> physical;
  };

  SpaceKey space_of(const MemoryEvent& event) const;
  SpaceTotals& totals_of(const SpaceKey& key) { return spaces_[key]; }
  // Both return the space whose totals changed (a free's space is its
  // allocation's, whatever the current device was when it was freed).
  SpaceKey acquire(SectionState& section, const MemoryEvent& event, const SpaceKey& space);
  SpaceKey release(SectionState& section, const MemoryEvent& event, const SpaceKey& space);
  void account(const Allocation& allocation, bool add);
  void update_pool(SectionState& section, uint64_t handle, const SpaceKey& space,
                   int64_t live_delta, uint64_t reported_bytes);
  void release_physical(SectionState& section, uint64_t handle, bool released, bool unmapped);
  void forget(SectionState& section, Allocation allocation, uint64_t end_ns);

  MemoryObserver* observer_;
  std::unordered_map<uint64_t, SectionState> sections_;
  std::map<SpaceKey, SpaceTotals> spaces_;
  StateCounters counters_;
};

}  // namespace proflaunch::tools::memory
