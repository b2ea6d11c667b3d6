// nvtx: host time per NVTX range name (push/pop and start/end ranges, by
// domain). nvtx-gpu: each range's GPU projection, as nsys projects NVTX onto
// the GPU: from the start of the first to the end of the last GPU work
// (kernels, copies, memsets, graph launches) that the range's thread
// launched inside it (a start/end range: its starting thread), per range
// name. Both stream: state per open range and per launch still waiting for
// its GPU time (bounded by the pass's join window), never per event.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <vector>

#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stats/duration_summary.h"
#include "tools/proftrace/interpret/nvtx_ranges.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;
using interpret::RangeTracker;

Table duration_table(const std::string& title, const std::map<std::string, DurationSummary>& by_label) {
  Table table;
  table.title = title;
  table.columns = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)",
                   "Range"};
  uint64_t grand_total = 0;
  for (const auto& [label, summary] : by_label) grand_total += summary.total_ns;
  std::vector<std::pair<std::string, DurationSummary>> sorted(by_label.begin(), by_label.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
  for (const auto& [label, s] : sorted)
    table.rows.push_back({format_percent(grand_total ? double(s.total_ns) / double(grand_total) : 0),
                          format_ns(s.total_ns), std::to_string(s.count), format_ns(static_cast<uint64_t>(s.mean_ns())),
                          format_ns(s.min_ns), format_ns(s.max_ns), format_ns(static_cast<uint64_t>(s.stddev_ns())),
                          label});
  return table;
}

class NvtxSummary final : public StatsSection {
 public:
  std::string name() const override { return "nvtx"; }
  void on_nvtx(const interpret::NvtxEvent& e) override {
    auto closed = [&](const RangeTracker::Open& open, uint64_t end_ns, uint64_t) {
      by_label_[open.label].add(end_ns > open.begin_ns ? end_ns - open.begin_ns : 0);
    };
    tracker_.on_event(e, closed);
    tracker_.settle_started(UINT64_MAX, closed);  // host time needs no later records
  }
  Table finish(const TraceModel&) override {
    Table table = duration_table("NVTX ranges: host time per range (domain: name)", by_label_);
    if (table.rows.empty()) return table;
    table.notes.push_back("push/pop ranges on their thread; start/end ranges from start to end, on any thread");
    if (const size_t open = tracker_.still_open(); open != 0)
      table.notes.push_back(std::to_string(open) + " ranges still open at the end (exit or crash) are not counted");
    return table;
  }

 private:
  RangeTracker tracker_;
  std::map<std::string, DurationSummary> by_label_;
};

class NvtxGpuSummary final : public StatsSection {
 public:
  std::string name() const override { return "nvtx-gpu"; }

 private:
  auto closed_callback() {
    return [this](const RangeTracker::Open& open, uint64_t, uint64_t) {
      auto it = projections_.find(open.id);
      if (it == projections_.end()) {
        ++without_gpu_work_;
        return;
      }
      it->second.closed = true;
      it->second.label = open.label;
      settle(open.id);
    };
  }

 public:

  void on_nvtx(const interpret::NvtxEvent& e) override {
    tracker_.on_event(e, closed_callback());
    tracker_.settle_started_on(e.section->id, e.tid, e.record.span.begin_ns, closed_callback());
  }
  void on_operation_read(const interpret::Operation& op) override { launched(op.section->id, op.tid, op.span()); }
  // The operation's GPU work (a graph timed node by node: its first node),
  // or none: the ranges open at its launch wait for it.
  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    auto it = waiting_.find({op.section->id, op.span().correlation_id});
    if (it == waiting_.end()) return;
    for (uint64_t id : it->second) {
      Projection& p = projections_[id];
      if (gpu != nullptr) {
        p.start_ns = std::min(p.start_ns, gpu->activity.start_ns);
        p.end_ns = std::max(p.end_ns, gpu->activity.end_ns);
      }
      --p.pending;
      settle(id);
    }
    waiting_.erase(it);
  }

  Table finish(const TraceModel&) override {
    tracker_.settle_started(UINT64_MAX, closed_callback());
    Table table = duration_table("NVTX ranges projected onto the GPU: first GPU start to last GPU end of the work "
                                 "each range launched",
                                 by_label_);
    if (table.rows.empty()) return table;
    if (without_gpu_work_ != 0)
      table.notes.push_back(std::to_string(without_gpu_work_) + " ranges launched no GPU work (not listed)");
    return table;
  }

 private:
  struct Projection {
    uint64_t start_ns = UINT64_MAX;
    uint64_t end_ns = 0;
    uint32_t pending = 0;
    bool closed = false;
    std::string label;
  };

  void launched(uint64_t s, uint32_t tid, const ApiSpan& span) {
    if (span.flags & kApiCaptured) return;  // did not run now
    tracker_.settle_started_on(s, tid, span.begin_ns, closed_callback());
    std::vector<uint64_t> ids;
    tracker_.open_on_thread(s, tid, span.begin_ns, [&](uint64_t id) { ids.push_back(id); });
    if (ids.empty()) return;
    for (uint64_t id : ids) ++projections_[id].pending;
    waiting_[{s, span.correlation_id}] = ids;
  }

  void settle(uint64_t id) {
    auto it = projections_.find(id);
    if (it == projections_.end() || !it->second.closed || it->second.pending != 0) return;
    const Projection& p = it->second;
    if (p.end_ns >= p.start_ns && p.start_ns != UINT64_MAX) by_label_[p.label].add(p.end_ns - p.start_ns);
    else ++without_gpu_work_;
    projections_.erase(it);
  }

  RangeTracker tracker_;
  std::unordered_map<uint64_t, Projection> projections_;
  // (section, correlation) of each launch inside ranges -> the ranges, until
  // the pass hands over its GPU work (or says none came).
  std::map<std::pair<uint64_t, uint64_t>, std::vector<uint64_t>> waiting_;
  std::map<std::string, DurationSummary> by_label_;
  uint64_t without_gpu_work_ = 0;
};

}  // namespace

std::unique_ptr<StatsSection> make_nvtx_summary() { return std::make_unique<NvtxSummary>(); }
std::unique_ptr<StatsSection> make_nvtx_gpu_summary() { return std::make_unique<NvtxGpuSummary>(); }

}  // namespace proflaunch::tools::stats
