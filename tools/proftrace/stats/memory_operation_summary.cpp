// mem-ops: copies and memsets per kind (nsys: cuda_gpu_mem_time_sum and
// cuda_gpu_mem_size_sum in one table). A kind is the copy's direction and
// the memory at each end (pageable or pinned host memory, device, managed,
// array), or a memset and the memory it sets. Bytes come from the call,
// GPU time from the GPU work the interpretation pass joined to it. An operation without GPU time (GPU timing off,
// or its activity lost) still counts with its bytes, in its own column.
#include <algorithm>
#include <limits>
#include <map>

#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stats/duration_summary.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

// What the rows are grouped by.
struct OperationKind {
  bool memset = false;
  uint8_t direction = 0;  // CopyDirection; 0 for memsets
  uint8_t src_kind = 0;   // MemoryKind; 0 for memsets
  uint8_t dst_kind = 0;
  auto operator<=>(const OperationKind&) const = default;

  std::string label() const {
    if (memset) return "Memset " + memory_kind_name(dst_kind);
    return "Memcpy " + copy_direction_name(direction) + " " + memory_kind_name(src_kind) + " -> " +
           memory_kind_name(dst_kind);
  }
};

struct PendingOperation {
  OperationKind kind;
  uint64_t bytes = 0;
};

struct KindSummary {
  uint64_t count = 0;
  uint64_t bytes = 0;
  uint64_t min_bytes = std::numeric_limits<uint64_t>::max();
  uint64_t max_bytes = 0;
  DurationSummary gpu_time;  // operations with GPU time only
  uint64_t timed_bytes = 0;  // their bytes: the bandwidth's numerator
  uint64_t untimed = 0;

  void add_bytes(uint64_t operation_bytes) {
    ++count;
    bytes += operation_bytes;
    min_bytes = std::min(min_bytes, operation_bytes);
    max_bytes = std::max(max_bytes, operation_bytes);
  }
};

std::string format_bandwidth(uint64_t bytes, uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", double(bytes) / double(ns));  // bytes per ns = GB/s (10^9)
  return text;
}

class MemoryOperationSummary final : public StatsSection {
 public:
  std::string name() const override { return "mem-ops"; }

  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    PendingOperation operation;
    if (op.kind == interpret::OperationKind::kCopy)
      operation = PendingOperation{{false, op.copy.direction, op.copy.src_kind, op.copy.dst_kind}, op.copy.bytes};
    else if (op.kind == interpret::OperationKind::kMemset)
      operation = PendingOperation{{true, 0, 0, op.set.dst_kind}, op.set.bytes};
    else
      return;
    if (op.captured()) return;  // a graph node: runs when its graph is launched (`graphs`)
    if (op.span().result != 0) {
      ++failed_;
      if (gpu != nullptr) ++activities_without_operation_;
      return;
    }
    KindSummary& s = by_kind_[operation.kind];
    s.add_bytes(operation.bytes);
    if (gpu == nullptr) {
      ++s.untimed;
      return;
    }
    s.gpu_time.add(gpu->duration_ns());
    s.timed_bytes += operation.bytes;
  }

  void on_gpu_work_alone(const interpret::GpuWork& work) override {
    const auto kind = static_cast<GpuActivityKind>(work.activity.kind);
    // A node of a graph carries the graph launch's correlation id: its call is the graph's (`graphs`).
    if ((kind == GpuActivityKind::kMemoryCopy || kind == GpuActivityKind::kMemorySet) && work.activity.graph_node == 0)
      ++activities_without_operation_;
  }

  Table finish(const TraceModel&) override {
    Table table;
    table.title = "Memory operations: GPU time and bytes per kind";
    table.columns = {"Time (%)", "Total Time (ns)", "Count", "Avg (ns)", "Min (ns)", "Max (ns)",
                     "Total Bytes", "Avg Bytes", "Min Bytes", "Max Bytes", "Bandwidth (GB/s)", "No GPU Time",
                     "Operation"};
    uint64_t grand_total = 0, untimed = 0;
    for (const auto& [kind, s] : by_kind_) {
      grand_total += s.gpu_time.total_ns;
      untimed += s.untimed;
    }
    std::vector<std::pair<OperationKind, KindSummary>> sorted(by_kind_.begin(), by_kind_.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      if (a.second.gpu_time.total_ns != b.second.gpu_time.total_ns)
        return a.second.gpu_time.total_ns > b.second.gpu_time.total_ns;
      return a.second.bytes > b.second.bytes;
    });
    for (const auto& [kind, s] : sorted) {
      const DurationSummary& t = s.gpu_time;
      const bool timed = t.count != 0;
      table.rows.push_back(
          {timed ? format_percent(grand_total ? double(t.total_ns) / double(grand_total) : 0) : "-",
           timed ? format_ns(t.total_ns) : "-", std::to_string(s.count),
           timed ? format_ns(static_cast<uint64_t>(t.mean_ns())) : "-", timed ? format_ns(t.min_ns) : "-",
           timed ? format_ns(t.max_ns) : "-", std::to_string(s.bytes), std::to_string(s.bytes / s.count),
           std::to_string(s.min_bytes), std::to_string(s.max_bytes),
           timed && t.total_ns > 0 ? format_bandwidth(s.timed_bytes, t.total_ns) : "-", std::to_string(s.untimed),
           kind.label()});
    }
    if (untimed > 0)
      table.notes.push_back(std::to_string(untimed) +
                            " operations had no GPU time (GPU timing off, or lost): counted with their bytes, "
                            "not in the times, shares or bandwidths");
    if (failed_ > 0)
      table.notes.push_back(std::to_string(failed_) + " failed calls (nothing moved) are not counted");
    if (activities_without_operation_ > 0)
      table.notes.push_back(std::to_string(activities_without_operation_) +
                            " GPU copies or memsets whose call is not in the trace are not counted");
    return table;
  }

 private:
  std::map<OperationKind, KindSummary> by_kind_;
  uint64_t activities_without_operation_ = 0;
  uint64_t failed_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_memory_operation_summary() { return std::make_unique<MemoryOperationSummary>(); }

}  // namespace proflaunch::tools::stats
