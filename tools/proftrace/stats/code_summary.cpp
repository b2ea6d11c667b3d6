// code: where the GPU time went, by the user's code. Every call with a stack
// is attributed to one frame (StackFormatter::attribute: the innermost
// Python frame, else the innermost native frame outside the runtimes, the
// driver and the vendor libraries), and the rows sum, per source line
// (default), function, file or module: the GPU time of the kernels, copies
// and memsets launched there (joined as call-sites joins them), the launches,
// and the bytes allocated there (joined as alloc-sites joins them).
//
// State grows with the number of distinct stacks; rows are made at the end.
#include <algorithm>
#include <map>
#include <tuple>

#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/stack_joins.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

struct Amounts {
  uint64_t gpu_ns = 0;
  uint64_t launches = 0;        // launch-point stacks: kernels, copies, memsets
  uint64_t timed_launches = 0;  // those joined to their GPU time
  uint64_t bytes = 0;
  uint64_t allocations = 0;

  void add(const Amounts& other) {
    gpu_ns += other.gpu_ns;
    launches += other.launches;
    timed_launches += other.timed_launches;
    bytes += other.bytes;
    allocations += other.allocations;
  }
  uint64_t average_gpu_ns() const { return timed_launches ? gpu_ns / timed_launches : 0; }
};

struct Row {
  std::string name;
  Amounts amounts;
  uint64_t stacks = 0;
  StackKey heaviest;      // the stack shown for the row
  Amounts heaviest_amounts;
};

// What the row of `site` is called at the granularity asked for.
std::string row_name(const StackFormatter::CallSite& site, const std::string& by) {
  if (by == "function") {
    if (site.python) return site.function.empty() ? site.file : site.file + " " + site.function;
    if (site.function.empty()) return site.text;
    return site.module.empty() ? site.function : site.function + " [" + site.module + "]";
  }
  if (by == "file") {
    if (!site.file.empty()) return site.file;
    return site.module.empty() ? site.text : site.module;
  }
  if (by == "module") {
    if (!site.module.empty()) return site.module;
    return site.python ? site.file : "(no module)";
  }
  return site.text;
}

bool heavier(const Amounts& a, const Amounts& b) {
  return std::tie(a.gpu_ns, a.bytes, a.launches) > std::tie(b.gpu_ns, b.bytes, b.launches);
}

// Descending by the chosen column, then GPU time, bytes and name; names
// ascending.
bool comes_first(const Row& a, const Row& b, const std::string& order) {
  auto value = [&](const Row& row) -> uint64_t {
    const Amounts& x = row.amounts;
    if (order == "calls") return x.launches;
    if (order == "bytes") return x.bytes;
    if (order == "allocs") return x.allocations;
    if (order == "avg") return x.average_gpu_ns();
    if (order == "stacks") return row.stacks;
    return x.gpu_ns;
  };
  if (order != "name" && value(a) != value(b)) return value(a) > value(b);
  if (order != "name" && a.amounts.gpu_ns != b.amounts.gpu_ns) return a.amounts.gpu_ns > b.amounts.gpu_ns;
  if (order != "name" && a.amounts.bytes != b.amounts.bytes) return a.amounts.bytes > b.amounts.bytes;
  return a.name < b.name;
}

std::string column_of(const std::string& by) {
  if (by == "function") return "Function";
  if (by == "file") return "File";
  if (by == "module") return "Module";
  return "Line";
}

class CodeView final : public StatsSection {
 public:
  explicit CodeView(StatsOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "code"; }

  std::vector<interpret::Consumer*> parts() override { return {&gpu_join_, &alloc_join_}; }

  void on_any_call(const interpret::Call& call) override {
    if (stacks_at(call.stacks, StackPoint::kLaunch)) ++by_stack_[stack_key(call.section, call.stacks)].launches;
  }
  void on_gpu_work_read(const interpret::GpuWork& work) override { trace_gpu_ns_ += work.duration_ns(); }

  Table finish(const TraceModel& model) override {
    StackFormatter formatter;
    std::map<std::string, Row> rows;
    uint64_t attributed_gpu_ns = 0;
    for (const auto& [key, amounts] : by_stack_) {
      const SectionModel* section = model.find(key.section);
      if (section == nullptr) continue;
      const StackFormatter::CallSite site = formatter.attribute(*section, key.native, key.python);
      if (site.text.empty()) continue;
      const std::string name = row_name(site, options_.by);
      Row& row = rows[name];
      if (row.stacks == 0 || heavier(amounts, row.heaviest_amounts)) {
        row.heaviest = key;
        row.heaviest_amounts = amounts;
      }
      row.name = name;
      row.amounts.add(amounts);
      ++row.stacks;
      attributed_gpu_ns += amounts.gpu_ns;
    }
    if (rows.empty()) return Table{};

    std::vector<Row> sorted;
    size_t below_min_time = 0;
    for (auto& [name, row] : rows) {
      if (row.amounts.gpu_ns < options_.min_gpu_ns)
        ++below_min_time;
      else
        sorted.push_back(std::move(row));
    }
    std::sort(sorted.begin(), sorted.end(),
              [&](const Row& a, const Row& b) { return comes_first(a, b, options_.order); });

    Table table;
    table.title = "Code: GPU time, launches and bytes allocated by " + options_.by +
                  " (kernels, copies, memsets; the call site of each stack)";
    table.columns = {"GPU Time (ns)", "Share (%)", "Launches", "Avg GPU (ns)", "Bytes Allocated", "Allocations",
                     "Stacks", column_of(options_.by)};
    table.show_stacks = options_.full_stacks;
    for (size_t i = 0; i < sorted.size() && i < options_.top; ++i) {
      const Row& row = sorted[i];
      const Amounts& x = row.amounts;
      table.rows.push_back({std::to_string(x.gpu_ns),
                            format_percent(attributed_gpu_ns ? double(x.gpu_ns) / double(attributed_gpu_ns) : 0),
                            std::to_string(x.launches), std::to_string(x.average_gpu_ns()), std::to_string(x.bytes),
                            std::to_string(x.allocations), std::to_string(row.stacks), row.name});
      const SectionModel* section = model.find(row.heaviest.section);
      table.stacks.push_back(formatter.frames(*section, row.heaviest.native, row.heaviest.python));
    }
    if (sorted.size() > options_.top)
      table.notes.push_back(std::to_string(sorted.size()) + " rows; the top " + std::to_string(options_.top) +
                            " are shown");
    if (below_min_time > 0)
      table.notes.push_back(std::to_string(below_min_time) + " rows with less than " +
                            std::to_string(options_.min_gpu_ns) + " ns of GPU time are left out");
    if (trace_gpu_ns_ > attributed_gpu_ns)
      table.notes.push_back(std::to_string(trace_gpu_ns_ - attributed_gpu_ns) + " ns of the trace's " +
                            std::to_string(trace_gpu_ns_) +
                            " ns of GPU time have no call stack (not recorded, or not joined) and are not counted");
    return table;
  }

 private:
  StatsOptions options_;
  std::map<StackKey, Amounts> by_stack_;
  GpuTimeByStack gpu_join_{[this](const StackKey& key, uint64_t gpu_ns) {
    by_stack_[key].gpu_ns += gpu_ns;
    ++by_stack_[key].timed_launches;
  }};
  BytesAllocatedByStack alloc_join_{[this](const StackKey& key, uint64_t bytes) {
    by_stack_[key].bytes += bytes;
    ++by_stack_[key].allocations;
  }};
  uint64_t trace_gpu_ns_ = 0;
};

}  // namespace

const std::vector<std::string>& code_aggregations() {
  static const std::vector<std::string> values = {"line", "function", "file", "module"};
  return values;
}

const std::vector<std::string>& code_order_keys() {
  static const std::vector<std::string> values = {"gpu", "calls", "avg", "bytes", "allocs", "stacks", "name"};
  return values;
}

std::unique_ptr<StatsSection> make_code_summary(const StatsOptions& options) {
  return std::make_unique<CodeView>(options);
}

}  // namespace proflaunch::tools::stats
