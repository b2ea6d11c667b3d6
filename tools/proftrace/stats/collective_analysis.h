// What the NCCL stats sections compute from a trace: every collective call
// with its GPU interval (the kernel launched for it, or for its group),
// matched across ranks into instances, and every other kernel's interval
// (compute). A rank's arrival at an instance is the start of its
// collective's GPU interval (when its stream reached the call); the last
// arrival is when the instance could really start, so a rank's wait is
// (last arrival - its arrival), and the instance's own time is the
// duration of the last rank to arrive (it did not wait).
//
// Memory: one small entry per collective call, and a bounded amount per
// section for kernels. A kernel's GPU interval waits in a window (the last
// `window` kernels) for the collective that launched it; one that leaves it
// unclaimed is compute. Compute and communication intervals are summed per
// section as the trace is read: once a section holds `seal_at` of them, the
// part before their median start is unioned, intersected and sealed (an
// interval arriving later that reaches back before the seal counts only
// from it on).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

struct CollectiveArrival {
  int32_t rank;       // process rank (RANK...), else the communicator rank
  int64_t start_ns;   // aligned timeline
  int64_t end_ns;
};

struct CollectiveInstance {
  uint8_t op;
  uint64_t size_bytes;  // nccl-tests' "size": total bytes of the operation
  int32_t nranks;
  std::vector<CollectiveArrival> arrivals;

  int64_t last_arrival_ns() const;
  // The duration of the last rank to arrive: the collective without waiting.
  int64_t own_time_ns() const;
  int32_t straggler() const;  // the rank that arrived last
};

struct RankTimes {
  int64_t compute_ns = 0;
  int64_t communication_ns = 0;
  int64_t overlap_ns = 0;
  uint64_t collectives = 0;
  int64_t wait_ns = 0;
  uint64_t arrived_last = 0;    // instances (of >1 rank) it arrived last at
  int64_t caused_wait_ns = 0;   // the others' wait in those instances
};

class CollectiveAnalysis : public interpret::Consumer {
 public:
  explicit CollectiveAnalysis(size_t window = size_t{1} << 16, size_t seal_at = size_t{1} << 18)
      : window_(window), seal_at_(seal_at) {}
  void on_collective(const interpret::Event<format::CollectiveRecord>& e) override;
  void on_collective_group(const interpret::Event<format::CollectiveGroupRecord>& e) override;
  void on_gpu_work_read(const interpret::GpuWork& work) override;
  // Matches everything once the last record was seen.
  void finish(const TraceModel& model);

  const std::vector<CollectiveInstance>& instances() const { return instances_; }
  const std::map<int32_t, RankTimes>& ranks() const { return ranks_; }
  uint64_t calls_without_gpu_time() const { return calls_without_gpu_time_; }
  uint64_t calls() const { return calls_.size(); }

 private:
  struct Call {
    uint64_t section;
    uint64_t correlation;
    uint64_t group_id;
    uint64_t stream;
    uint8_t op;
    uint64_t comm_id;
    uint64_t sequence;
    uint64_t bytes;
    int32_t rank, nranks, root;
  };
  struct Interval {
    int64_t start_ns, end_ns;
  };
  using Key = std::pair<uint64_t, uint64_t>;  // (section, correlation)
  // A section's compute and communication time, summed as it is read.
  struct SectionTimes {
    std::vector<std::pair<int64_t, int64_t>> compute, communication;  // not sealed yet
    int64_t sealed_until = INT64_MIN;
    int64_t compute_ns = 0, communication_ns = 0, overlap_ns = 0;
  };

  void claim(const Key& kernel);
  void add_interval(uint64_t section, Interval interval, bool communication);
  void seal(SectionTimes& times, int64_t until);

  size_t window_, seal_at_;
  std::vector<Call> calls_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t>, uint64_t> groups_;  // (section, group, stream) -> correlation
  std::map<Key, Interval> recent_;             // kernels in the window, not claimed yet
  std::deque<Key> recent_order_;               // oldest first (claimed ones are skipped)
  std::set<Key> awaited_;                      // collective kernels whose interval has not come yet
  std::map<Key, Interval> collective_kernels_; // claimed: one per collective call or group
  std::map<uint64_t, SectionTimes> times_;
  std::vector<CollectiveInstance> instances_;
  std::map<int32_t, RankTimes> ranks_;
  uint64_t calls_without_gpu_time_ = 0;
};

// Total length of the union of `intervals` (sorted in place).
int64_t union_length_ns(std::vector<std::pair<int64_t, int64_t>>& intervals);
// Length of the intersection of two unions.
int64_t overlap_length_ns(std::vector<std::pair<int64_t, int64_t>>& a, std::vector<std::pair<int64_t, int64_t>>& b);

}  // namespace proflaunch::tools::stats
