// The two passes of analyze_memory() (memory_analysis.h), as observers of a
// MemoryState fed by replay_events(). Internal to tools/proftrace/memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <queue>
#include <vector>

#include "tools/proftrace/memory/memory_report.h"
#include "tools/proftrace/memory/memory_state.h"
#include "tools/proftrace/memory/time_order.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::memory {

// Reads every input's events in file order, puts the memory events into time
// order per section and applies them to `state`. Returns what the buffer had
// to apply late; adds LOST counts to `lost_records`.
uint64_t replay_events(std::vector<InputTrace>& inputs, const TraceModel& model, MemoryState& state,
                       const TimeOrderBuffer::Options& order, uint64_t* lost_records);

// Names for what the outputs show: API and thread names from the definitions.
class AllocationNamer {
 public:
  explicit AllocationNamer(const TraceModel& model) : model_(model) {}
  std::string api(uint64_t section_id, uint16_t api) const;
  std::string thread(uint64_t section_id, uint32_t tid) const;
  AllocationView view(const Allocation& allocation) const;

 private:
  const TraceModel& model_;
};

struct PeakAt {
  Peak peak;
  uint64_t event_index = UINT64_MAX;  // the applied event after which it was reached
};

// What the first pass learns per space.
struct SpaceFacts {
  uint64_t first_ns = UINT64_MAX;
  uint64_t last_ns = 0;
  uint64_t events = 0;
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t failures = 0;
  PeakAt allocated;
  PeakAt reserved;
  PeakAt managed;
  PeakAt pinned;
  SpaceTotals at_end;
};

// Pass 1: spans, peaks, failures with their state, the largest allocations.
class FirstPass : public MemoryObserver {
 public:
  explicit FirstPass(const AllocationNamer& namer) : namer_(namer) {}
  void attach(const MemoryState* state) { state_ = state; }
  void on_event(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) override;
  void on_allocation(const Allocation& allocation) override;
  void on_free(const Allocation& allocation) override;
  void on_failure(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) override;

  // After the pass: live allocations become intervals that end with the trace.
  void finish();

  const std::map<SpaceKey, SpaceFacts>& spaces() const { return spaces_; }
  std::vector<FailureReport>& failures() { return failures_; }
  std::vector<MemoryInfoSample>& memory_info() { return memory_info_; }
  // Largest first.
  std::vector<Allocation> largest_intervals();

 private:
  struct Smaller {
    bool operator()(const Allocation& a, const Allocation& b) const { return a.bytes > b.bytes; }
  };
  void offer_interval(const Allocation& allocation);

  const AllocationNamer& namer_;
  const MemoryState* state_ = nullptr;
  uint64_t event_index_ = 0;
  std::map<SpaceKey, SpaceFacts> spaces_;
  std::vector<FailureReport> failures_;
  std::vector<MemoryInfoSample> memory_info_;
  std::priority_queue<Allocation, std::vector<Allocation>, Smaller> intervals_;  // smallest on top
};

// Pass 2: live allocations at each space's peak, downsampled timelines, churn.
class SecondPass : public MemoryObserver {
 public:
  SecondPass(const std::map<SpaceKey, SpaceFacts>& facts, size_t timeline_buckets);
  void attach(const MemoryState* state) { state_ = state; }
  void on_event(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) override;
  void on_allocation(const Allocation& allocation) override;
  void on_free(const Allocation& allocation) override;
  void finish();

  struct SpaceResult {
    std::vector<Allocation> live_at_peak;  // largest first, at most MemoryReport::kMaxListed
    uint64_t live_at_peak_count = 0;
    uint64_t live_at_peak_unlisted_bytes = 0;
    std::vector<Sample> timeline;
    Churn churn;
  };
  std::map<SpaceKey, SpaceResult>& results() { return results_; }

 private:
  struct Sampler {
    uint64_t first_ns = 0;
    uint64_t bucket_ns = 0;  // 0: keep every change
    uint64_t bucket = UINT64_MAX;
    bool has_max = false;
    Sample max;
    Sample last;
    bool host = false;
  };
  void sample(Sampler& sampler, SpaceResult& result, uint64_t time_ns, const SpaceTotals& totals);
  void flush_bucket(Sampler& sampler, SpaceResult& result);
  void snapshot_live(const SpaceKey& space, SpaceResult& result);
  bool in_churn_window(const SpaceKey& space, uint64_t time_ns, SpaceResult** result);

  const std::map<SpaceKey, SpaceFacts>& facts_;
  const MemoryState* state_ = nullptr;
  uint64_t event_index_ = 0;
  std::map<SpaceKey, Sampler> samplers_;
  std::map<SpaceKey, SpaceResult> results_;
};

}  // namespace proflaunch::tools::memory
