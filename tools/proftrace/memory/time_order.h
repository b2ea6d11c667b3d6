// Puts each section's memory events back into time order.
//
// The shim writes each thread's records in order, but a chunk holds what the
// writer drained from several threads' buffers, so a free recorded on one
// thread can reach the file before the allocation it frees, recorded a few
// milliseconds earlier on another. A running total applied in file order
// would then go negative, or miss a peak. Events wait in a per-section heap
// until events `horizon_ns` newer have been seen (the writer drains every
// thread at least every 10 ms, so disorder beyond a fraction of a second
// means a stalled writer), or until `max_buffered` are waiting. An event
// that still arrives after newer ones were released is applied at the
// release time reached so far, and counted.
//
// Most events arrive in order: they wait in a queue, and only those that
// arrive out of order go through a heap, so in-order traffic costs O(1).
//
// Memory: the events of one horizon (or max_buffered), not the trace.
// Deterministic: the same input releases the same events in the same order,
// which lets a second pass stop exactly where the first one saw a peak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <queue>
#include <unordered_map>
#include <vector>

#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::tools::memory {

class TimeOrderBuffer {
 public:
  struct Options {
    uint64_t horizon_ns = 500'000'000;
    size_t max_buffered = size_t{1} << 20;  // per section
  };

  TimeOrderBuffer() = default;
  explicit TimeOrderBuffer(Options options) : options_(options) {}

  // Adds `event` and hands every event that can no longer be overtaken to
  // `release`, oldest first.
  template <typename Release>
  void push(MemoryEvent event, Release&& release) {
    event.arrival = next_arrival_++;
    Section& section = sections_[event.section_id];
    if (section.any_released && event.time_ns < section.released_ns) {
      event.time_ns = section.released_ns;
      ++late_events_;
    }
    if (event.time_ns > section.newest_ns) section.newest_ns = event.time_ns;
    if (section.in_order.empty() || !Later{}(section.in_order.back(), event)) section.in_order.push_back(event);
    else section.stragglers.push(event);
    while (const MemoryEvent* oldest = section.oldest()) {
      if (oldest->time_ns + options_.horizon_ns >= section.newest_ns && section.size() <= options_.max_buffered) break;
      release_oldest(section, release);
    }
  }

  // Releases everything still waiting, section by section.
  template <typename Release>
  void finish(Release&& release) {
    for (auto& [id, section] : sections_)
      while (section.oldest() != nullptr) release_oldest(section, release);
  }

  uint64_t late_events() const { return late_events_; }

 private:
  struct Later {
    bool operator()(const MemoryEvent& a, const MemoryEvent& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.arrival > b.arrival;
    }
  };
  struct Section {
    std::deque<MemoryEvent> in_order;  // arrival order is time order here
    std::priority_queue<MemoryEvent, std::vector<MemoryEvent>, Later> stragglers;
    uint64_t newest_ns = 0;
    uint64_t released_ns = 0;
    bool any_released = false;

    size_t size() const { return in_order.size() + stragglers.size(); }
    const MemoryEvent* oldest() const {
      if (in_order.empty()) return stragglers.empty() ? nullptr : &stragglers.top();
      if (stragglers.empty() || Later{}(stragglers.top(), in_order.front())) return &in_order.front();
      return &stragglers.top();
    }
  };

  template <typename Release>
  void release_oldest(Section& section, Release& release) {
    MemoryEvent event;
    if (!section.in_order.empty() && section.oldest() == &section.in_order.front()) {
      event = section.in_order.front();
      section.in_order.pop_front();
    } else {
      event = section.stragglers.top();
      section.stragglers.pop();
    }
    section.released_ns = event.time_ns;
    section.any_released = true;
    release(event);
  }

  Options options_;
  std::unordered_map<uint64_t, Section> sections_;
  uint64_t next_arrival_ = 0;
  uint64_t late_events_ = 0;
};

}  // namespace proflaunch::tools::memory
