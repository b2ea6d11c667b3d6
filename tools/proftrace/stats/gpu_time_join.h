// Pairs a host operation (launch, copy, memset) with the GPU time of its
// GpuActivity while streaming, by (section, correlation id). Either may be
// read first: each waits in a FIFO window of bounded length, and when the
// window is full its oldest entry leaves unpaired, so memory stays constant
// however long the trace is. Operations that leave unpaired (evicted, or
// still waiting at the end) are handed back, so a section can say how many
// had no GPU time instead of dropping them silently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>

#include "formats/records.h"

namespace proflaunch::tools::stats {

inline constexpr size_t kGpuTimeJoinWindow = size_t{1} << 17;

inline uint64_t gpu_duration_ns(const format::GpuActivityRecord& activity) {
  return activity.end_ns > activity.start_ns ? activity.end_ns - activity.start_ns : 0;
}

template <typename Operation>
class GpuTimeJoin {
 public:
  using Joined = std::function<void(const Operation&, uint64_t gpu_ns)>;
  using Alone = std::function<void(const Operation&)>;

  GpuTimeJoin(Joined joined, Alone alone, size_t window = kGpuTimeJoinWindow)
      : joined_(std::move(joined)), alone_(std::move(alone)), window_(window) {}

  void add_operation(uint64_t section, uint64_t correlation, const Operation& operation) {
    const Key key{section, correlation};
    if (auto it = activities_.find(key); it != activities_.end()) {
      joined_(operation, it->second);
      activities_.erase(it);
      return;
    }
    operations_[key] = operation;
    remember(key);
  }

  void add_activity(uint64_t section, uint64_t correlation, uint64_t gpu_ns) {
    const Key key{section, correlation};
    if (auto it = operations_.find(key); it != operations_.end()) {
      joined_(it->second, gpu_ns);
      operations_.erase(it);
      return;
    }
    activities_[key] = gpu_ns;
    remember(key);
  }

  // End of input: every operation still waiting had no GPU time.
  void finish() {
    for (const auto& [key, operation] : operations_) alone_(operation);
    activities_without_operation_ += activities_.size();
    operations_.clear();
    activities_.clear();
    order_.clear();
  }

  // GPU activities whose call never came (lost, or outside the window).
  uint64_t activities_without_operation() const { return activities_without_operation_; }

 private:
  struct Key {
    uint64_t section;
    uint64_t correlation;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      return std::hash<uint64_t>()(key.section * 0x9E3779B97F4A7C15ull ^ key.correlation);
    }
  };

  void remember(const Key& key) {
    order_.push_back(key);
    while (order_.size() > window_) {
      // Matched keys are still in the FIFO; erasing them again finds nothing.
      const Key old = order_.front();
      order_.pop_front();
      if (auto it = operations_.find(old); it != operations_.end()) {
        alone_(it->second);
        operations_.erase(it);
      }
      activities_without_operation_ += activities_.erase(old);
    }
  }

  Joined joined_;
  Alone alone_;
  size_t window_;
  std::unordered_map<Key, Operation, KeyHash> operations_;
  std::unordered_map<Key, uint64_t, KeyHash> activities_;
  std::deque<Key> order_;
  uint64_t activities_without_operation_ = 0;
};

}  // namespace proflaunch::tools::stats
