// gpu-kernels: GPU time per kernel name (nsys: cuda_gpu_kern_sum). A kernel's
// name comes from its launch, its time from its GpuActivity; the two are
// joined by correlation id in a bounded window, as in `convert`.
#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/stats/duration_summary.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

constexpr size_t kJoinWindow = size_t{1} << 17;

struct Key {
  uint64_t section;
  uint64_t correlation;
  bool operator==(const Key& other) const { return section == other.section && correlation == other.correlation; }
};
struct KeyHash {
  size_t operator()(const Key& key) const { return std::hash<uint64_t>()(key.section * 31 + key.correlation); }
};

class GpuKernelSummary final : public StatsSection {
 public:
  std::string name() const override { return "gpu-kernels"; }

  void on_record(const SectionModel& section, const RecordView& record) override {
    if (record.kind == static_cast<uint16_t>(RecordKind::kKernelLaunch)) {
      const auto launch = record.as<KernelLaunchRecord>();
      if (launch.span.flags & kApiCaptured) return;  // runs only when its graph is launched (`graphs`)
      const Key key{section.section_id, launch.span.correlation_id};
      const std::string name(section.function_name(launch.function, launch.span.begin_ns));
      if (auto it = early_activities_.find(key); it != early_activities_.end()) {
        by_name_[name].add(it->second);
        early_activities_.erase(it);
        return;
      }
      remember(launches_, key, name);
    } else if (record.kind == static_cast<uint16_t>(RecordKind::kGpuActivity)) {
      const auto activity = record.as<GpuActivityRecord>();
      if (activity.kind != static_cast<uint8_t>(GpuActivityKind::kKernel)) return;
      const uint64_t duration = activity.end_ns > activity.start_ns ? activity.end_ns - activity.start_ns : 0;
      const Key key{section.section_id, activity.correlation_id};
      if (auto it = launches_.find(key); it != launches_.end()) {
        by_name_[it->second].add(duration);
        launches_.erase(it);
      } else {
        remember(early_activities_, key, duration);
      }
    }
  }

  Table finish(const TraceModel&) override {
    Table table;
    table.title = "GPU kernels: time per kernel name";
    table.columns = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Min (ns)", "Max (ns)",
                     "StdDev (ns)", "Name"};
    uint64_t grand_total = 0;
    for (const auto& [name, summary] : by_name_) grand_total += summary.total_ns;
    std::vector<std::pair<std::string, DurationSummary>> sorted(by_name_.begin(), by_name_.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
    for (const auto& [name, s] : sorted) {
      table.rows.push_back({format_percent(grand_total ? double(s.total_ns) / double(grand_total) : 0),
                            format_ns(s.total_ns), std::to_string(s.count),
                            format_ns(static_cast<uint64_t>(s.mean_ns)), format_ns(s.min_ns), format_ns(s.max_ns),
                            format_ns(static_cast<uint64_t>(s.stddev_ns())),
                            name.empty() ? std::string("<unnamed kernel>") : demangle(name)});
    }
    if (!launches_.empty() || unmatched_ > 0)
      table.notes.push_back(std::to_string(launches_.size() + unmatched_) +
                            " launches without GPU time (GPU timing off, or lost) are not counted");
    return table;
  }

 private:
  template <typename Map, typename Value>
  void remember(Map& map, const Key& key, const Value& value) {
    map[key] = value;
    order_.push_back(key);
    while (order_.size() > kJoinWindow) {
      // The oldest entry leaves unmatched: memory stays bounded.
      const Key old = order_.front();
      order_.pop_front();
      unmatched_ += launches_.erase(old) + early_activities_.erase(old);
    }
  }

  std::map<std::string, DurationSummary> by_name_;
  std::unordered_map<Key, std::string, KeyHash> launches_;
  std::unordered_map<Key, uint64_t, KeyHash> early_activities_;
  std::deque<Key> order_;
  uint64_t unmatched_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_gpu_kernel_summary() { return std::make_unique<GpuKernelSummary>(); }

}  // namespace proflaunch::tools::stats
