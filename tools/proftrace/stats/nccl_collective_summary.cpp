// nccl-collectives: per collective type and message size, the instances,
// their time and nccl-tests' bandwidths. An instance's time is that of the
// rank that arrived last (the collective without anyone's waiting):
// algbw = size / time, busbw = algbw * factor (all-reduce 2(n-1)/n,
// all-gather, reduce-scatter, all-to-all, gather, scatter (n-1)/n,
// broadcast, reduce, send/recv 1); size is nccl-tests' (the total bytes of
// all-gather, reduce-scatter and all-to-all).
#include <map>

#include "tools/proftrace/collective_text.h"
#include "tools/proftrace/stats/collective_analysis.h"
#include "tools/proftrace/stats/duration_summary.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

std::string gigabytes_per_second(double bytes, double ns) {
  if (ns <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", bytes / ns);  // bytes per ns = GB/s
  return text;
}

class NcclCollectiveSummary final : public StatsSection {
 public:
  std::string name() const override { return "nccl-collectives"; }
  std::vector<interpret::Consumer*> parts() override { return {&analysis_}; }

  Table finish(const TraceModel& model) override {
    analysis_.finish(model);
    struct Row {
      DurationSummary time;
      int32_t nranks = 0;
    };
    std::map<std::pair<std::string, uint64_t>, Row> rows;
    for (const CollectiveInstance& instance : analysis_.instances()) {
      Row& row = rows[{collective_op_name(instance.op), instance.size_bytes}];
      row.time.add(static_cast<uint64_t>(std::max<int64_t>(instance.own_time_ns(), 0)));
      row.nranks = std::max(row.nranks, instance.nranks);
    }
    Table table;
    table.title = "NCCL collectives: time and bandwidth per operation and size";
    table.columns = {"Operation", "Size (bytes)", "Ranks", "Instances", "Total Time (ns)", "Avg (ns)",
                     "Min (ns)", "Max (ns)", "AlgBW (GB/s)", "BusBW (GB/s)"};
    for (const auto& [key, row] : rows) {
      const uint8_t op = op_of(key.first);
      const double size = static_cast<double>(key.second);
      table.rows.push_back({key.first, std::to_string(key.second), std::to_string(row.nranks),
                            std::to_string(row.time.count), format_ns(row.time.total_ns),
                            format_ns(static_cast<uint64_t>(row.time.mean_ns())), format_ns(row.time.min_ns),
                            format_ns(row.time.max_ns), gigabytes_per_second(size, row.time.mean_ns()),
                            gigabytes_per_second(size * bus_bandwidth_factor(op, row.nranks), row.time.mean_ns())});
    }
    if (analysis_.calls_without_gpu_time() > 0)
      table.notes.push_back(std::to_string(analysis_.calls_without_gpu_time()) +
                            " calls without GPU time (GPU timing off, lost, or a kernel of another context) are not counted");
    table.notes.push_back("time: the duration on the rank that arrived last (no waiting); AlgBW = size / time, "
                          "BusBW = AlgBW * nccl-tests' factor for the operation");
    return table;
  }

 private:
  static uint8_t op_of(const std::string& name) {
    for (uint8_t op = 1; op <= 10; ++op)
      if (collective_op_name(op) == name) return op;
    return 0;
  }
  CollectiveAnalysis analysis_;
};

}  // namespace

std::unique_ptr<StatsSection> make_nccl_collective_summary() { return std::make_unique<NcclCollectiveSummary>(); }

}  // namespace proflaunch::tools::stats
