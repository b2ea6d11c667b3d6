// call-sites: the call sites (merged native and Python stacks) that launched
// the most GPU time - kernels, copies and memsets - in the manner of a
// profiler's "top call paths" view: each operation's launch stack with the
// GPU time of its work (stack_joins.h). State grows with the number of
// distinct stacks, not with the number of operations.
//
// alloc-sites: the same table by bytes allocated (stack_joins.h says which
// allocations count), each with its memory-point stack.
#include <algorithm>
#include <map>

#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/stack_joins.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

// Sums a quantity per call site and renders the top rows.
class CallSiteTable {
 public:
  explicit CallSiteTable(size_t rows_shown) : rows_shown_(rows_shown) {}

  void add(const StackKey& key, uint64_t amount) {
    Total& total = by_stack_[key];
    total.amount += amount;
    ++total.count;
  }

  Table render(const TraceModel& model, const std::string& title, const std::string& amount_column,
               const std::string& count_column) const {
    // Identical stacks of different processes (ranks, workers) are one site.
    struct Site {
      std::string call_site;
      uint64_t amount = 0;
      uint64_t count = 0;
    };
    StackFormatter formatter;
    std::map<std::string, Site> by_text;
    uint64_t grand_total = 0;
    for (const auto& [key, total] : by_stack_) {
      const SectionModel* section = model.find(key.section);
      if (section == nullptr) continue;
      std::string text;
      for (const std::string& frame : formatter.frames(*section, key.native, key.python))
        text += (text.empty() ? "" : " > ") + frame;
      if (text.empty()) continue;
      Site& site = by_text[text];
      if (site.call_site.empty()) site.call_site = formatter.call_site(*section, key.native, key.python);
      site.amount += total.amount;
      site.count += total.count;
      grand_total += total.amount;
    }
    std::vector<std::pair<std::string, Site>> sorted(by_text.begin(), by_text.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second.amount > b.second.amount; });
    Table table;
    table.title = title;
    table.columns = {"Share (%)", amount_column, count_column, "Call site", "Stack (root > leaf)"};
    for (size_t i = 0; i < sorted.size() && i < rows_shown_; ++i) {
      const Site& site = sorted[i].second;
      table.rows.push_back({format_percent(grand_total ? double(site.amount) / double(grand_total) : 0),
                            std::to_string(site.amount), std::to_string(site.count), site.call_site,
                            sorted[i].first});
    }
    if (sorted.size() > rows_shown_)
      table.notes.push_back(std::to_string(sorted.size()) + " call sites; the top " +
                            std::to_string(rows_shown_) + " are shown");
    return table;
  }

  bool empty() const { return by_stack_.empty(); }

 private:
  struct Total {
    uint64_t amount = 0;
    uint64_t count = 0;
  };
  size_t rows_shown_;
  std::map<StackKey, Total> by_stack_;
};

class GpuTimeByCallSite final : public StatsSection {
 public:
  explicit GpuTimeByCallSite(size_t rows_shown) : table_(rows_shown) {}
  std::string name() const override { return "call-sites"; }
  std::vector<interpret::Consumer*> parts() override { return {&join_}; }

  Table finish(const TraceModel& model) override {
    if (table_.empty()) return Table{};
    Table table = table_.render(model, "Call sites: GPU time they launched (kernels, copies, memsets)",
                                "GPU Time (ns)", "Operations");
    if (join_.unmatched() > 0)
      table.notes.push_back(std::to_string(join_.unmatched()) +
                            " operations with a stack but no GPU time (GPU timing off, or lost) are not counted");
    return table;
  }

 private:
  CallSiteTable table_;
  GpuTimeByStack join_{[this](const StackKey& key, uint64_t gpu_ns) { table_.add(key, gpu_ns); }};
};

class BytesAllocatedByCallSite final : public StatsSection {
 public:
  explicit BytesAllocatedByCallSite(size_t rows_shown) : table_(rows_shown) {}
  std::string name() const override { return "alloc-sites"; }
  std::vector<interpret::Consumer*> parts() override { return {&join_}; }

  Table finish(const TraceModel& model) override {
    if (table_.empty()) return Table{};
    Table table = table_.render(model, "Call sites: bytes allocated (device, pool, managed, pinned host, VMM physical)",
                                "Bytes", "Allocations");
    if (join_.unmatched() > 0)
      table.notes.push_back(std::to_string(join_.unmatched()) +
                            " allocations without a recorded stack are not counted");
    return table;
  }

 private:
  CallSiteTable table_;
  BytesAllocatedByStack join_{[this](const StackKey& key, uint64_t bytes) { table_.add(key, bytes); }};
};

}  // namespace

std::unique_ptr<StatsSection> make_call_site_summary(const StatsOptions& options) {
  return std::make_unique<GpuTimeByCallSite>(options.top);
}
std::unique_ptr<StatsSection> make_alloc_site_summary(const StatsOptions& options) {
  return std::make_unique<BytesAllocatedByCallSite>(options.top);
}

}  // namespace proflaunch::tools::stats
