// overview: where did the time go. Three tables: the GPUs of the trace; GPU
// utilization (the union of GPU work over the analysed time, per device and
// over all devices); and per step, its time split into kernel, memcpy,
// memset, communication, sync wait, CPU-only and other. The rules (how steps
// are found, how overlaps are attributed) are in tools/README.md, "overview".
//
// Memory: the timeline is bounded (category_timeline.h); per step, its
// NVTX range or its first launch; per launching thread, a launch count and
// at most kPeriodicityPrefix kernel handles; per open NVTX range, its start.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "preload/capture/capture_spec.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stats/category_timeline.h"
#include "tools/proftrace/stats/nvtx_ranges.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/step_periodicity.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

// Top-level (or --step-range) ranges kept as step candidates, over all
// threads and names: past this, further ranges are not stored (a note says so).
constexpr size_t kMaxStoredRanges = size_t{1} << 21;
constexpr size_t kMaxSequenceThreads = 64;
constexpr size_t kMinNvtxSteps = 3;

using ThreadKey = std::pair<uint64_t, uint32_t>;  // (section, tid)

struct Step {
  uint64_t begin_ns, end_ns;
};

// The kernels a thread launched, in order: the prefix the periodicity is
// found in, and once found, where each later step begins.
struct KernelSequence {
  std::vector<uint64_t> kernels;
  std::vector<uint64_t> begins_ns;
  std::optional<Periodicity> found;
  bool checked = false;
  std::vector<uint64_t> later_cuts_ns;
};

// Categories in the order of the output columns.
constexpr std::array<TimeCategory, 5> kGpuColumns = {TimeCategory::kKernel, TimeCategory::kMemcpy,
                                                     TimeCategory::kMemset, TimeCategory::kCommunication,
                                                     TimeCategory::kSyncWait};

class OverviewSummary final : public StatsSection {
 public:
  explicit OverviewSummary(const StatsOptions& options) : top_(options.top) {
    if (!options.step_range.empty()) {
      CaptureSpec spec;
      CaptureOptions capture;
      capture.steps = "0:0:1";
      capture.step_range = options.step_range.c_str();
      char error[512];
      if (parse_capture_options(capture, spec, error, sizeof error) && spec.step_source == StepSource::kNvtx) {
        step_name_ = spec.name;
        step_domain_ = spec.domain;
      }
    }
  }
  std::string name() const override { return "overview"; }

  void on_record(const SectionModel& section, const RecordView& record) override {
    if (has_api_span(record.kind) && record.bytes >= kApiSpanOffset + sizeof(ApiSpan)) {
      ApiSpan span;
      std::memcpy(&span, record.data + kApiSpanOffset, sizeof span);
      if (!(span.flags & kApiCarried)) extend(span.begin_ns, span.end_ns);
    }
    const uint64_t s = section.section_id;
    switch (record.record_kind()) {
      case RecordKind::kKernelLaunch: {
        const auto launch = record.as<KernelLaunchRecord>();
        if (!launched(launch.span, {s, record.tid})) break;
        add_kernel({s, record.tid}, launch.function, launch.span.begin_ns);
        break;
      }
      case RecordKind::kMemoryCopy: launched(record.as<MemoryCopyRecord>().span, {s, record.tid}); break;
      case RecordKind::kMemorySet: launched(record.as<MemorySetRecord>().span, {s, record.tid}); break;
      case RecordKind::kGraphLaunch: launched(record.as<GraphLaunchRecord>().span, {s, record.tid}); break;
      case RecordKind::kSynchronize: {
        const auto sync = record.as<SynchronizeRecord>();
        if (sync.target != static_cast<uint8_t>(SyncTarget::kStreamWaitEvent))
          timeline_.add(sync.span.begin_ns, sync.span.end_ns, TimeCategory::kSyncWait);
        break;
      }
      case RecordKind::kCollective: {
        const auto call = record.as<CollectiveRecord>();
        // Grouped calls share their group's kernel (the CollectiveGroup record).
        if (call.span.result == 0 && call.sequence != 0 && call.group_id == 0)
          collective_kernels_.insert({s, call.span.correlation_id});
        break;
      }
      case RecordKind::kCollectiveGroup:
        collective_kernels_.insert({s, record.as<CollectiveGroupRecord>().span.correlation_id});
        break;
      case RecordKind::kGpuActivity: on_activity(s, record.as<GpuActivityRecord>()); break;
      case RecordKind::kNvtxEvent: on_nvtx(section, record); break;
      default: break;
    }
  }

  Table finish(const TraceModel& model) override { return finish_tables(model).back(); }
  std::vector<Table> finish_tables(const TraceModel& model) override;

 private:
  void extend(uint64_t begin_ns, uint64_t end_ns) {
    if (end_ns < begin_ns) return;
    first_ns_ = std::min(first_ns_, begin_ns);
    last_ns_ = std::max(last_ns_, end_ns);
  }

  // A call that put work on a GPU: counts for its thread.
  bool launched(const ApiSpan& span, const ThreadKey& thread) {
    if (span.result != 0 || (span.flags & kApiCaptured)) return false;
    ++launches_[thread];
    return true;
  }

  void add_kernel(const ThreadKey& thread, uint64_t function, uint64_t begin_ns) {
    auto it = sequences_.find(thread);
    if (it == sequences_.end()) {
      if (sequences_.size() >= kMaxSequenceThreads) return;
      it = sequences_.emplace(thread, KernelSequence{}).first;
    }
    KernelSequence& seq = it->second;
    if (seq.kernels.size() < kPeriodicityPrefix) {
      seq.kernels.push_back(function);
      seq.begins_ns.push_back(begin_ns);
      if (seq.kernels.size() == kPeriodicityPrefix) {
        seq.checked = true;
        seq.found = find_periodicity(seq.kernels);
      }
    } else if (seq.found && function == seq.found->first_kernel) {
      seq.later_cuts_ns.push_back(begin_ns);
    }
  }

  void on_activity(uint64_t s, const GpuActivityRecord& activity) {
    extend(activity.start_ns, activity.end_ns);
    TimeCategory category = TimeCategory::kOtherGpu;
    switch (static_cast<GpuActivityKind>(activity.kind)) {
      case GpuActivityKind::kKernel:
        category = collective_kernels_.erase({s, activity.correlation_id}) != 0 ? TimeCategory::kCommunication
                                                                                 : TimeCategory::kKernel;
        break;
      case GpuActivityKind::kMemoryCopy: category = TimeCategory::kMemcpy; break;
      case GpuActivityKind::kMemorySet: category = TimeCategory::kMemset; break;
      default: break;
    }
    const auto [it, added] = devices_.emplace(std::make_pair(s, activity.device), devices_.size());
    timeline_.add(activity.start_ns, activity.end_ns, category, it->second);
  }

  void on_nvtx(const SectionModel& section, const RecordView& record) {
    const auto event = record.as<NvtxEventRecord>();
    const auto key = std::make_tuple(section.section_id, record.tid, event.domain);
    if (event.type == static_cast<uint8_t>(NvtxEventType::kPush)) {
      const RangeName range = range_name(section, event, nvtx_inline_message(record.data, record.bytes));
      const bool wanted = step_name_.empty() || (range.name == step_name_ && range.domain == step_domain_);
      open_[key].push_back(OpenRange{event.span.end_ns, wanted ? range.label() : std::string()});
    } else if (event.type == static_cast<uint8_t>(NvtxEventType::kPop)) {
      auto it = open_.find(key);
      if (it == open_.end() || it->second.empty()) return;
      const OpenRange open = it->second.back();
      it->second.pop_back();
      // --step-range: its ranges at any depth; else the top-level ones.
      const bool candidate = !open.label.empty() && (!step_name_.empty() || it->second.empty());
      if (!candidate) return;
      if (stored_ranges_ >= kMaxStoredRanges) {
        ++dropped_ranges_;
        return;
      }
      ++stored_ranges_;
      ranges_[{section.section_id, record.tid}][open.label].push_back(
          Step{open.begin_ns, std::max(open.begin_ns, event.span.begin_ns)});
    }
  }

  std::vector<Step> find_steps(std::string* method);
  Table devices_table(const TraceModel& model) const;
  Table utilization_table(const TraceModel& model) const;
  Table steps_table(const std::vector<Step>& steps, const std::string& method) const;

  struct OpenRange {
    uint64_t begin_ns;
    std::string label;  // "" when not a step candidate (--step-range names another)
  };

  size_t top_;
  std::string step_name_, step_domain_;
  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;
  CategoryTimeline timeline_;
  std::set<std::pair<uint64_t, uint64_t>> collective_kernels_;  // (section, correlation) awaiting their kernel
  std::map<std::pair<uint64_t, int32_t>, uint64_t> devices_;    // (section, device) -> timeline device key
  std::map<ThreadKey, uint64_t> launches_;
  std::map<ThreadKey, KernelSequence> sequences_;
  std::map<std::tuple<uint64_t, uint32_t, uint64_t>, std::vector<OpenRange>> open_;
  std::map<ThreadKey, std::map<std::string, std::vector<Step>>> ranges_;
  size_t stored_ranges_ = 0;
  uint64_t dropped_ranges_ = 0;
};


std::vector<Step> OverviewSummary::find_steps(std::string* method) {
  std::optional<ThreadKey> busiest;
  for (const auto& [thread, count] : launches_)
    if (!busiest || count > launches_[*busiest]) busiest = thread;

  if (!step_name_.empty()) {
    // --step-range: its ranges on the thread that has the most of them.
    const std::vector<Step>* best = nullptr;
    for (const auto& [thread, by_label] : ranges_)
      for (const auto& [label, steps] : by_label)
        if (best == nullptr || steps.size() > best->size()) best = &steps;
    const std::string wanted = step_domain_.empty() ? step_name_ : step_name_ + "@" + step_domain_;
    if (best != nullptr) {
      *method = "steps: NVTX range '" + wanted + "' (--step-range), " + std::to_string(best->size()) + " times";
      return *best;
    }
    *method = "steps: no NVTX push/pop range '" + wanted + "' was found (--step-range): the whole run is one step";
    return {};
  }

  if (busiest) {
    auto thread = ranges_.find(*busiest);
    if (thread != ranges_.end()) {
      const std::pair<const std::string, std::vector<Step>>* best = nullptr;
      for (const auto& entry : thread->second)
        if (best == nullptr || entry.second.size() > best->second.size()) best = &entry;
      if (best != nullptr && best->second.size() >= kMinNvtxSteps) {
        *method = "steps: NVTX range '" + best->first + "', the most frequent top-level range on the thread that "
                  "launched the most GPU work (" + std::to_string(best->second.size()) + " times)";
        return best->second;
      }
    }
    auto seq = sequences_.find(*busiest);
    if (seq != sequences_.end()) {
      KernelSequence& s = seq->second;
      if (!s.checked) s.found = find_periodicity(s.kernels);
      if (s.found) {
        std::vector<uint64_t> cuts;
        for (size_t i = 0; i < s.kernels.size(); ++i)
          if (s.kernels[i] == s.found->first_kernel) cuts.push_back(s.begins_ns[i]);
        cuts.insert(cuts.end(), s.later_cuts_ns.begin(), s.later_cuts_ns.end());
        std::vector<Step> steps;
        for (size_t i = 0; i < cuts.size(); ++i)
          steps.push_back(Step{cuts[i], i + 1 < cuts.size() ? cuts[i + 1] : std::max(cuts[i], last_ns_)});
        *method = "steps: periodicity: the kernel sequence of the thread that launched the most GPU work repeats "
                  "every " + std::to_string(s.found->period) + " launches; a step begins at each launch of its "
                  "first kernel (the last step ends with the trace; found in the first " +
                  std::to_string(kPeriodicityPrefix) + " launches)";
        return steps;
      }
    }
  }
  *method = "steps: no NVTX range occurs " + std::to_string(kMinNvtxSteps) +
            " times at the top level of the busiest launching thread, and its kernel sequence is not periodic: "
            "the whole run is one step";
  return {};
}

Table OverviewSummary::devices_table(const TraceModel& model) const {
  Table table;
  table.title = "Overview: GPUs";
  table.columns = {"PID", "Device", "SMs", "Memory (MiB)", "Name"};
  for (const SectionModel* section : model.ordered())
    for (const auto& [ordinal, device] : section->devices)
      table.rows.push_back({std::to_string(section->pid()), std::to_string(ordinal),
                            std::to_string(device.multiprocessor_count),
                            std::to_string(device.total_memory_bytes >> 20),
                            std::string(section->string(device.name_string))});
  return table;
}

Table OverviewSummary::utilization_table(const TraceModel& model) const {
  Table table;
  table.title = "Overview: GPU utilization";
  table.columns = {"PID", "Device", "Busy (ns)", "Analysed (ns)", "Utilization (%)"};
  if (last_ns_ <= first_ns_) return table;
  const uint64_t analysed = last_ns_ - first_ns_;
  const auto& busy = timeline_.device_busy_ns();
  for (const auto& [device, key] : devices_) {
    const SectionModel* section = model.find(device.first);
    const auto it = busy.find(key);
    const uint64_t ns = it != busy.end() ? it->second : 0;
    table.rows.push_back({std::to_string(section ? section->pid() : 0), std::to_string(device.second),
                          format_ns(ns), format_ns(analysed), format_percent(double(ns) / double(analysed))});
  }
  uint64_t any = 0;
  for (size_t c = 0; c < kTimeCategories; ++c)
    if (is_gpu_category(static_cast<TimeCategory>(c))) any += timeline_.totals()[c];
  table.rows.push_back({"all", "all", format_ns(any), format_ns(analysed),
                        format_percent(double(any) / double(analysed))});
  table.notes.push_back("busy: the union of GPU work (kernels, copies, memsets, other) on the device; all: on any "
                        "device. Analysed: the first to the last event of the trace");
  return table;
}

Table OverviewSummary::steps_table(const std::vector<Step>& steps, const std::string& method) const {
  Table table;
  table.title = "Overview: step time breakdown";
  table.columns = {"Step", "Start (ns)", "Duration (ns)"};
  const char* names[] = {"Kernel", "Memcpy", "Memset", "Communication", "Sync Wait", "CPU Only", "Other"};
  for (const char* n : names) {
    table.columns.push_back(std::string(n) + " (ns)");
    table.columns.push_back(std::string(n) + " (%)");
  }
  if (last_ns_ <= first_ns_) return table;
  // Columns: the five of kGpuColumns, CPU-only (the rest), other GPU work.
  using Breakdown = std::array<uint64_t, 7>;
  auto breakdown_of = [&](const Step& step) {
    const auto times = timeline_.breakdown(step.begin_ns, step.end_ns);
    Breakdown b{};
    uint64_t attributed = 0;
    for (size_t i = 0; i < kGpuColumns.size(); ++i) b[i] = std::llround(times[size_t(kGpuColumns[i])]);
    b[6] = std::llround(times[size_t(TimeCategory::kOtherGpu)]);
    for (size_t i : {0, 1, 2, 3, 4, 6}) attributed += b[i];
    const uint64_t duration = step.end_ns - step.begin_ns;
    b[5] = duration > attributed ? duration - attributed : 0;
    return b;
  };
  auto row = [&](const std::string& label, const std::string& start, double duration, const std::array<double, 7>& b) {
    std::vector<std::string> cells = {label, start, format_ns(std::llround(duration))};
    for (double ns : b) {
      cells.push_back(format_ns(std::llround(ns)));
      cells.push_back(format_percent(duration > 0 ? ns / duration : 0));
    }
    table.rows.push_back(std::move(cells));
  };
  const std::vector<Step> analysed = steps.empty() ? std::vector<Step>{{first_ns_, last_ns_}} : steps;
  const size_t shown_first = analysed.size() <= top_ ? analysed.size() : top_ / 2;
  const size_t shown_last = analysed.size() <= top_ ? 0 : top_ - top_ / 2;
  std::array<double, 7> total{};
  double total_duration = 0;
  for (size_t i = 0; i < analysed.size(); ++i) {
    const Step& step = analysed[i];
    const Breakdown b = breakdown_of(step);
    std::array<double, 7> as_double{};
    for (size_t c = 0; c < 7; ++c) total[c] += double(as_double[c] = double(b[c]));
    total_duration += double(step.end_ns - step.begin_ns);
    if (i < shown_first || i >= analysed.size() - shown_last)
      row(std::to_string(i + 1), format_ns(step.begin_ns - std::min(step.begin_ns, first_ns_)),
          double(step.end_ns - step.begin_ns), as_double);
  }
  std::array<double, 7> average = total;
  for (double& ns : average) ns /= double(analysed.size());
  row("average", "-", total_duration / double(analysed.size()), average);
  row("total", "-", total_duration, total);

  table.notes.push_back(method);
  if (analysed.size() > shown_first + shown_last)
    table.notes.push_back("rows: the first " + std::to_string(shown_first) + " and the last " +
                          std::to_string(shown_last) + " of " + std::to_string(analysed.size()) +
                          " steps (--top); average and total cover all of them");
  table.notes.push_back("each instant counts once: communication > kernel > memcpy > memset > other GPU work; "
                        "when no GPU work runs, sync wait if a host thread is in a synchronizing call, else CPU "
                        "only. Start: from the first event of the trace");
  if (timeline_.bin_width_ns() > 1)
    table.notes.push_back("step edges are resolved to " + format_ns(timeline_.bin_width_ns()) +
                          " ns (the timeline's bins for a run this long)");
  if (timeline_.late_intervals() > 0)
    table.notes.push_back(std::to_string(timeline_.late_intervals()) +
                          " intervals came too late in the file to be placed in full (counted from the time "
                          "already swept on)");
  if (dropped_ranges_ > 0)
    table.notes.push_back(std::to_string(dropped_ranges_) + " NVTX ranges past the first " +
                          std::to_string(kMaxStoredRanges) + " step candidates were not considered");
  return table;
}

std::vector<Table> OverviewSummary::finish_tables(const TraceModel& model) {
  timeline_.finish();
  std::string method;
  const std::vector<Step> steps = find_steps(&method);
  std::vector<Table> tables;
  tables.push_back(devices_table(model));
  tables.push_back(utilization_table(model));
  tables.push_back(steps_table(steps, method));
  return tables;
}

}  // namespace

std::unique_ptr<StatsSection> make_overview_summary(const StatsOptions& options) {
  return std::make_unique<OverviewSummary>(options);
}

}  // namespace proflaunch::tools::stats
