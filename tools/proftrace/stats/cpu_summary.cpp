// stats --section cpu: per process and thread, the functions, Python lines
// and modules that took the CPU samples (self and total) and the time
// blocked per call site; --during gpu-idle keeps what fell while the
// thread's GPU had no work, --step N one step.
#include <algorithm>

#include "tools/proftrace/interpret/blocking_calls.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/cpu_activity.h"
#include "tools/proftrace/stats/cpu_profile.h"
#include "tools/proftrace/stats/gpu_idle_gaps.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/step_detection.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

const char* mechanism_name(uint8_t mechanism) {
  switch (static_cast<CpuSamplingMechanism>(mechanism)) {
    case CpuSamplingMechanism::kThreadCpuTimer: return "a timer on each thread's CPU-time clock";
    case CpuSamplingMechanism::kPerfEvent: return "perf_event_open";
    case CpuSamplingMechanism::kNone: break;
  }
  return "no mechanism";
}

class CpuSummary final : public StatsSection {
 public:
  explicit CpuSummary(const StatsOptions& options) : options_(options), steps_(options.step_range) {}
  std::string name() const override { return "cpu"; }
  std::vector<interpret::Consumer*> parts() override {
    std::vector<interpret::Consumer*> parts{&activity_};
    if (options_.during == "gpu-idle") parts.push_back(&gaps_);
    if (options_.step > 0) parts.push_back(&steps_);
    return parts;
  }
  void on_pass_end(const std::vector<CaptureWindow>&) override { gaps_.finish(); }
  Table finish(const TraceModel&) override { return {}; }
  std::vector<Table> finish_tables(const TraceModel& model) override;

 private:
  StatsOptions options_;
  CpuActivity activity_;
  GpuIdleGaps gaps_;
  StepDetector steps_;
};

std::vector<Table> CpuSummary::finish_tables(const TraceModel& model) {
  if (activity_.empty()) return {};
  std::vector<std::string> notes;
  // The filters.
  uint64_t from_ns = 0, to_ns = UINT64_MAX;
  if (options_.step > 0) {
    std::string method;
    const std::vector<Step> steps = steps_.find_steps(&method);
    if (options_.step > steps.size()) {
      notes.push_back("no step " + std::to_string(options_.step) + ": " + std::to_string(steps.size()) +
                      " steps were found");
      from_ns = to_ns = 0;
    } else {
      from_ns = steps[options_.step - 1].begin_ns;
      to_ns = steps[options_.step - 1].end_ns;
      notes.push_back("step " + std::to_string(options_.step) + " of " + std::to_string(steps.size()) + " (" +
                      method + "): " + format_ns(to_ns - from_ns) + " ns");
    }
  }
  const bool idle_only = options_.during == "gpu-idle";
  IdleTimes idle(gaps_, activity_);
  if (idle_only)
    notes.push_back("only while the thread's GPU was idle: gaps of at least " + format_ns(kIdleGapMinNs) +
                    " ns with no GPU work on the devices the thread (else its process) put work on");

  StackFormatter formatter;
  ProfileBuilder builder(model, formatter);
  std::map<CpuActivity::ThreadKey, ThreadProfile> threads;
  for (const auto& sample : activity_.samples()) {
    if (sample.time_ns < from_ns || sample.time_ns >= to_ns) continue;
    const CpuActivity::ThreadKey key{sample.section, sample.tid};
    if (idle_only && !idle.contains(key, sample.time_ns)) continue;
    ThreadProfile& profile = threads[key];
    profile.period_ns = activity_.period_ns(sample.section);
    builder.add_sample(profile, sample);
  }
  for (const auto& wait : activity_.waits()) {
    const uint64_t begin = std::max(wait.begin_ns, from_ns), end = std::min(wait.end_ns, to_ns);
    if (end <= begin && !(wait.ns() == 0 && wait.begin_ns >= from_ns && wait.begin_ns < to_ns)) continue;
    const CpuActivity::ThreadKey key{wait.section, wait.tid};
    const uint64_t ns = idle_only ? idle.overlap(key, begin, end) : end - begin;
    if (idle_only && ns == 0) continue;
    ThreadProfile& profile = threads[key];
    if (profile.period_ns == 0) profile.period_ns = activity_.period_ns(wait.section);
    builder.add_wait(profile, wait, ns);
  }

  // Threads: the busiest first.
  std::vector<std::pair<CpuActivity::ThreadKey, const ThreadProfile*>> order;
  for (const auto& [key, profile] : threads) order.emplace_back(key, &profile);
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->samples * a.second->period_ns + a.second->blocked_ns >
           b.second->samples * b.second->period_ns + b.second->blocked_ns;
  });
  auto thread_cells = [&](const CpuActivity::ThreadKey& key) {
    const SectionModel* section = model.find(key.first);
    const std::string name = section != nullptr ? std::string(section->thread_name(key.second)) : "";
    return std::vector<std::string>{std::to_string(section != nullptr ? section->pid() : 0),
                                    std::to_string(key.second), name.empty() ? "-" : name};
  };
  auto profile_table = [&](const char* title, const char* what,
                           std::map<std::string, ProfileCount> ThreadProfile::*member) {
    Table table;
    table.title = title;
    table.columns = {"Pid", "Tid", "Thread", what, "Self", "Self %", "Self CPU (ns)", "Total", "Total %"};
    for (const auto& [key, profile] : order) {
      if (profile->samples == 0) continue;
      std::vector<std::pair<std::string, ProfileCount>> rows((profile->*member).begin(), (profile->*member).end());
      std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.second.self != b.second.self ? a.second.self > b.second.self : a.second.total > b.second.total;
      });
      for (size_t i = 0; i < rows.size() && i < options_.top; ++i) {
        std::vector<std::string> row = thread_cells(key);
        const double n = double(profile->samples);
        row.insert(row.end(), {rows[i].first, std::to_string(rows[i].second.self),
                               format_percent(double(rows[i].second.self) / n),
                               format_ns(rows[i].second.self * profile->period_ns),
                               std::to_string(rows[i].second.total), format_percent(double(rows[i].second.total) / n)});
        table.rows.push_back(std::move(row));
      }
    }
    return table;
  };
  std::vector<Table> tables;
  tables.push_back(profile_table("CPU samples by function (self: the frame running; total: anywhere on the stack)",
                                 "Function", &ThreadProfile::functions));
  tables.push_back(profile_table("CPU samples by Python line (self: the innermost Python frame)", "Python line",
                                 &ThreadProfile::lines));
  tables.push_back(profile_table("CPU samples by module", "Module", &ThreadProfile::modules));

  Table waits;
  waits.title = "Time blocked by call site (libc calls that blocked at least --osrt-threshold)";
  waits.columns = {"Pid", "Tid", "Thread", "Call site", "Calls", "Blocked (ns)", "Max (ns)", "Share of thread's blocked %"};
  for (const auto& [key, profile] : order) {
    std::vector<std::pair<std::string, WaitSite>> rows(profile->waits.begin(), profile->waits.end());
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
    for (size_t i = 0; i < rows.size() && i < options_.top; ++i) {
      std::vector<std::string> row = thread_cells(key);
      row.insert(row.end(), {rows[i].first, std::to_string(rows[i].second.calls), format_ns(rows[i].second.ns),
                             format_ns(rows[i].second.max_ns),
                             format_percent(profile->blocked_ns ? double(rows[i].second.ns) / double(profile->blocked_ns)
                                                                : 0)});
      waits.rows.push_back(std::move(row));
    }
  }
  tables.push_back(std::move(waits));

  // What the sampling was, per process.
  uint64_t samples = 0;
  for (const auto& [key, profile] : threads) samples += profile.samples;
  notes.insert(notes.begin(), std::to_string(samples) + " samples and " + std::to_string(activity_.waits().size()) +
                                  " blocking calls in the trace were read; " + std::to_string(threads.size()) +
                                  " threads shown");
  for (const auto& [section_id, s] : activity_.sampling()) {
    const SectionModel* section = model.find(section_id);
    const std::string pid = "pid " + std::to_string(section != nullptr ? section->pid() : 0);
    if (s.seen)
      notes.push_back(pid + ": sampled at " + std::to_string(s.last.hz) + " Hz of each thread's CPU time (" +
                      mechanism_name(s.last.mechanism) + ", signal " + std::to_string(s.last.signal_number) + ")");
    if (s.stepped_back)
      notes.push_back(pid + ": sampling stepped back: the program installed its own handler for the sampling signal");
    if (s.unavailable) notes.push_back(pid + ": sampling was unavailable (the timers could not be created)");
    if (s.lost_unsafe + s.lost_buffer_full > 0)
      notes.push_back(pid + ": " + std::to_string(s.lost_unsafe) + " samples not taken where the stack could not be read "
                      "safely, " + std::to_string(s.lost_buffer_full) + " beyond the sample buffer");
  }
  // The notes go under the first table that is printed; when the filters
  // left nothing, under a row that says so.
  if (std::all_of(tables.begin(), tables.end(), [](const Table& t) { return t.rows.empty(); }))
    tables.front().rows.push_back({"-", "-", "-", "(no sample or wait passed the filters)", "0", "0.0", "0", "0", "0.0"});
  for (Table& table : tables)
    if (!table.rows.empty()) {
      table.notes = notes;
      break;
    }
  return tables;
}

}  // namespace

std::unique_ptr<StatsSection> make_cpu_summary(const StatsOptions& options) {
  return std::make_unique<CpuSummary>(options);
}

}  // namespace proflaunch::tools::stats
