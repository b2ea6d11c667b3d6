// The overview's timeline: what the GPUs (and, when they are idle, the
// host) were doing at each instant, one category per instant, so that
// categories never overlap and a step's categories add up to its length.
//
// Intervals arrive in file order, which is only roughly time order (chunks
// of different threads, GPU activities flushed late). They wait in a
// min-heap of bounded size and leave it by start time into a sweep that
// keeps, per category, how far it is known to be busy; a later interval
// that reaches back before the sweep's frontier counts only from the
// frontier on (counted in late_intervals()). At each instant the category
// with the highest priority (lowest enum value) wins.
//
// The swept timeline is kept as fixed-count bins per category (exact ns
// per bin): bins start 1 ns wide and double (pairs merge) whenever the run
// outgrows them, so memory is constant and a window's breakdown is exact
// while the run spans fewer than kTimelineBins ns, else exact up to the
// two bins at its edges (split in proportion to the overlap).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <queue>
#include <vector>

namespace proflaunch::tools::stats {

enum class TimeCategory : uint8_t {
  kCommunication = 0,  // NCCL collective kernels
  kKernel,
  kMemcpy,
  kMemset,
  kOtherGpu,  // host functions, graphs as one unit of work, unknown kinds
  kSyncWait,  // GPU idle while a host thread waits in a synchronizing call
  kCount,
};
inline constexpr size_t kTimeCategories = static_cast<size_t>(TimeCategory::kCount);
inline constexpr bool is_gpu_category(TimeCategory c) { return c < TimeCategory::kSyncWait; }

inline constexpr size_t kTimelineBins = size_t{1} << 17;
inline constexpr size_t kTimelineReorderWindow = size_t{1} << 16;

class CategoryTimeline {
 public:
  explicit CategoryTimeline(size_t reorder_window = kTimelineReorderWindow) : window_(reorder_window) {}

  // `device` keys the per-device union (GPU categories only; ignored for sync).
  void add(uint64_t start_ns, uint64_t end_ns, TimeCategory category, uint64_t device = 0);
  // End of input: sweeps what is still waiting.
  void finish();

  // Time of each category in [begin, end) (after finish()).
  std::array<double, kTimeCategories> breakdown(uint64_t begin_ns, uint64_t end_ns) const;
  // Over the whole run.
  const std::array<uint64_t, kTimeCategories>& totals() const { return totals_; }
  // Per device key: the union of its GPU work.
  const std::map<uint64_t, uint64_t>& device_busy_ns() const { return device_busy_; }
  uint64_t late_intervals() const { return late_; }
  uint64_t bin_width_ns() const { return width_; }

 private:
  struct Interval {
    uint64_t start, end;
    TimeCategory category;
    uint64_t device;
    bool operator>(const Interval& other) const { return start > other.start; }
  };
  void sweep(const Interval& interval);
  void advance(uint64_t to_ns);  // emit the frontier up to `to_ns`
  void record(TimeCategory category, uint64_t begin_ns, uint64_t end_ns);
  void grow_to(uint64_t end_ns);

  size_t window_;
  std::priority_queue<Interval, std::vector<Interval>, std::greater<Interval>> waiting_;
  bool started_ = false;
  uint64_t frontier_ = 0;
  std::array<uint64_t, kTimeCategories> busy_until_{};
  std::array<uint64_t, kTimeCategories> totals_{};
  std::map<uint64_t, uint64_t> device_busy_, device_until_;
  uint64_t late_ = 0;
  // Bins: [origin_ + i * width_, origin_ + (i + 1) * width_), ns per category.
  uint64_t origin_ = 0;
  uint64_t width_ = 1;
  std::vector<std::array<uint64_t, kTimeCategories>> bins_;
};

}  // namespace proflaunch::tools::stats
