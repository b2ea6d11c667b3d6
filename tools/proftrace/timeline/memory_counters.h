// Memory counters on `proftrace convert`'s timeline (the memory model of
// tools/proftrace/memory, run inside the convert pass): per traced process and
// device "GPU <n> memory allocated" and "... reserved" (and "... managed"
// once the process uses managed memory), and "Host memory pinned" for pinned
// and registered host memory. Values are bytes. Each sample is a
// CounterSample of the traced process (timeline_events.h): one counter per
// value key, named "<name> <key>".
//
// The memory model runs in the convert pass itself (one pass, time-ordered
// per section, bounded by the live allocations): a value is written whenever
// it changes, so every peak is in the trace exactly.
#pragma once

#include <cstdint>
#include <map>

#include "tools/proftrace/memory/memory_event.h"
#include "tools/proftrace/memory/memory_state.h"
#include "tools/proftrace/memory/time_order.h"
#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::tools::timeline {

// A consumer of the interpretation pass, after the slice writer's (so that
// each counter follows the slice of the call that changed it).
class MemoryCounters : public memory::MemoryEventFeed, private memory::MemoryObserver {
 public:
  explicit MemoryCounters(TrackLayout& layout) : layout_(layout), state_(this) {}

  // After the last input: applies what still waits for time order.
  void finish();

  uint64_t counter_events() const { return counter_events_; }

 private:
  struct Written {
    uint64_t allocated = UINT64_MAX;
    uint64_t reserved = UINT64_MAX;
    uint64_t managed = UINT64_MAX;
    uint64_t pinned = UINT64_MAX;
    bool any_managed = false;
  };
  void memory_event(const memory::MemoryEvent& event) override;
  void on_event(const memory::MemoryEvent& event, const memory::SpaceKey& space,
                const memory::SpaceTotals& totals) override;

  TrackLayout& layout_;
  memory::MemoryState state_;
  memory::TimeOrderBuffer order_;
  std::map<memory::SpaceKey, Written> written_;
  uint64_t counter_events_ = 0;
};

}  // namespace proflaunch::tools::timeline
