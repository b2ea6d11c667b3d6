// api: host time per API (nsys: cuda_api_sum), from every call, with the
// number of calls that returned an error; and the calls that were counted
// rather than recorded (ApiCount: trivial getters, driver calls a runtime
// call made), whose time was not measured.
#include <algorithm>
#include <map>

#include "tools/proftrace/stats/duration_summary.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

class ApiSummary final : public StatsSection {
 public:
  std::string name() const override { return "api"; }

  void on_api_count(const interpret::Event<ApiCountRecord>& e) override {
    by_name_[e.section->model->api_name(e.record.api)].counted += e.record.count;
  }

  void on_any_call(const interpret::Call& call) override {
    const ApiSpan& span = call.span;
    if ((span.flags & kApiCarried) != 0) return;  // state carried into a capture window, not a call
    Entry& entry = by_name_[call.section->model->api_name(span.api)];
    // A failed counted call has no duration: it counts as a call and an error.
    if ((span.flags & kApiNoDuration) != 0) ++entry.unmeasured;
    else entry.durations.add(span.end_ns > span.begin_ns ? span.end_ns - span.begin_ns : 0);
    if (span.result != 0) ++entry.errors;
  }

  Table finish(const TraceModel&) override {
    Table table;
    table.title = "API calls: host time per API";
    table.columns = {"Time (%)", "Total Time (ns)", "Num Calls", "Avg (ns)", "Min (ns)", "Max (ns)",
                     "Errors", "Counted", "Name"};
    table.notes.push_back("Counted: calls counted but not timed (trivial getters; driver calls a runtime call "
                          "made on its behalf), not in Num Calls or the times");
    uint64_t grand_total = 0;
    for (const auto& [name, entry] : by_name_) grand_total += entry.durations.total_ns;
    std::vector<std::pair<std::string, Entry>> sorted(by_name_.begin(), by_name_.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      if (a.second.durations.total_ns != b.second.durations.total_ns)
        return a.second.durations.total_ns > b.second.durations.total_ns;
      return a.second.counted > b.second.counted;
    });
    for (const auto& [name, entry] : sorted) {
      const DurationSummary& d = entry.durations;
      const bool timed = d.count != 0;
      table.rows.push_back({timed ? format_percent(grand_total ? double(d.total_ns) / double(grand_total) : 0) : "-",
                            timed ? format_ns(d.total_ns) : "-", std::to_string(d.count + entry.unmeasured),
                            timed ? format_ns(static_cast<uint64_t>(d.mean_ns())) : "-", timed ? format_ns(d.min_ns) : "-",
                            timed ? format_ns(d.max_ns) : "-", std::to_string(entry.errors),
                            std::to_string(entry.counted), name});
    }
    return table;
  }

 private:
  struct Entry {
    DurationSummary durations;
    uint64_t unmeasured = 0;  // failed counted calls: recorded, not timed
    uint64_t errors = 0;
    uint64_t counted = 0;
  };
  std::map<std::string, Entry> by_name_;
};

}  // namespace

std::unique_ptr<StatsSection> make_api_summary() { return std::make_unique<ApiSummary>(); }

}  // namespace proflaunch::tools::stats
