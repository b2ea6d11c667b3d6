// What `proftrace memory` finds out, independent of how it is written
// (terminal report, HTML page, CSV, JSON). Built by analyze_memory().
//
// Times are CLOCK_MONOTONIC ns as in the trace; writers show them relative
// to `base_ns`, the earliest section start (as `proftrace convert` does).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/memory/memory_state.h"

namespace proflaunch::tools::memory {

// An allocation as the outputs show it: who made it and when.
struct AllocationView {
  SpaceKey space;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t time_ns = 0;
  uint64_t end_ns = 0;  // 0: still live at the end of the trace
  uint64_t correlation_id = 0;
  format::AllocationKind kind = format::AllocationKind::kDevice;
  std::string api;     // cudaMalloc, cuMemAllocAsync, ...
  uint32_t tid = 0;
  std::string thread;  // thread name, "" if unnamed
  uint32_t native_stack = 0;  // the allocating call's stacks (ids), 0 when none
  uint32_t python_stack = 0;
  // Those stacks as text (one frame per line, root first), once
  // attach_call_stacks has formatted them; nullopt when there are none.
  std::optional<std::string> stack;
};

struct Peak {
  uint64_t bytes = 0;
  uint64_t time_ns = 0;
};

// One point of a space's timeline.
struct Sample {
  uint64_t time_ns = 0;
  SpaceTotals totals;
};

struct Churn {
  uint64_t window_begin_ns = 0;  // the steady state: the middle 80 % of the space's event span
  uint64_t window_end_ns = 0;
  uint64_t allocations = 0;      // in the window
  uint64_t frees = 0;
  uint64_t allocated_bytes = 0;
  double allocations_per_s() const { return per_second(allocations); }
  double frees_per_s() const { return per_second(frees); }
  double allocated_bytes_per_s() const { return per_second(allocated_bytes); }

 private:
  double per_second(uint64_t count) const {
    const uint64_t span = window_end_ns - window_begin_ns;
    return span == 0 ? 0.0 : static_cast<double>(count) * 1e9 / static_cast<double>(span);
  }
};

// The state at a failed allocation.
struct FailureReport {
  SpaceKey space;
  uint64_t time_ns = 0;
  std::string api;
  format::AllocationKind kind = format::AllocationKind::kDevice;
  int32_t result = 0;
  uint64_t requested_bytes = 0;
  uint32_t tid = 0;
  std::string thread;
  uint64_t correlation_id = 0;
  SpaceTotals totals;                    // at that moment
  std::vector<AllocationView> largest;   // the largest live blocks then (at most kLargestAtFailure)
  bool detailed = true;                  // false past kDetailedFailures: totals only
};

// A device of a process (or the process's pinned host memory).
struct SpaceReport {
  SpaceKey key;
  uint32_t pid = 0;
  std::string process;       // command line
  std::string device_name;   // from DeviceInfo, "" when unknown
  uint64_t device_total_bytes = 0;
  uint64_t first_ns = 0;     // its first and last memory event
  uint64_t last_ns = 0;
  uint64_t events = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failures = 0;
  Peak peak_allocated;
  Peak peak_reserved;
  Peak peak_managed;
  Peak peak_pinned;          // host space
  SpaceTotals at_end;
  // Live at the allocated peak (the pinned peak for the host space),
  // largest first; at most kMaxListed, the rest summed.
  std::vector<AllocationView> live_at_peak;
  uint64_t live_at_peak_count = 0;
  uint64_t live_at_peak_unlisted_bytes = 0;
  std::vector<Sample> timeline;  // time order; every event, or two per bucket on long traces
  Churn churn;
  uint64_t leaked_blocks = 0;   // live at the end of the trace
  uint64_t leaked_bytes = 0;

  bool is_host() const { return key.device == kHostSpace; }
};

struct MemoryInfoSample {
  SpaceKey space;
  uint64_t time_ns = 0;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

struct MemoryReport {
  uint64_t base_ns = 0;
  std::vector<SpaceReport> spaces;  // by section display order, then device (host last)
  std::vector<FailureReport> failures;  // time order
  std::vector<AllocationView> leaks;    // live at the end, largest first, at most kMaxListed
  // For hover details: the kMaxIntervals largest allocations ever made.
  std::vector<AllocationView> intervals;
  std::vector<MemoryInfoSample> memory_info;  // cuMemGetInfo answers (at most kMaxListed)
  StateCounters counters;
  uint64_t late_events = 0;  // applied later than recorded (TimeOrderBuffer)
  uint64_t lost_records = 0; // LOST counts in the memory sections: allocations may be missing
  uint64_t stacks_found = 0;

  static constexpr size_t kMaxListed = 1000;
  static constexpr size_t kMaxIntervals = 5000;
  static constexpr size_t kDetailedFailures = 100;
  static constexpr size_t kLargestAtFailure = 5;
};

}  // namespace proflaunch::tools::memory
