// recommendations: rules in the spirit of `nsys analyze` and the PyTorch
// profiler's TensorBoard advice, each checked against the trace and
// reported with its evidence (counts, bytes, host time, steps) and the
// user's call sites (StackFormatter::attribute: the Python line first). A
// rule that finds nothing says so, so a clean trace reads as clean. The
// rules and their thresholds are in tools/README.md, "recommendations".
// This file collects what the rules need while streaming; each rule's
// verdict is a function in a recommendation_*_rule(s).cpp file.
//
// Steps are the overview's (StepDetector). They are known only at the end,
// so each call a rule looks at (a candidate) is kept as a few numbers until
// then; at most kMaxCandidates per rule, past which the totals stay exact
// but steps and call sites are counted on the first ones (a note says so).
// Per call site: its stacks' ids; per small-grid launch, a few numbers
// until the pass hands over its GPU work.
// gpu-idle-gap's gaps and host history: gpu_idle_gaps.h, bounded there.
#include <algorithm>
#include <array>
#include <unordered_map>
#include <map>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/collective_analysis.h"
#include "tools/proftrace/stats/cpu_activity.h"
#include "tools/proftrace/stats/gpu_idle_gaps.h"
#include "tools/proftrace/stats/gpu_metric_series.h"
#include "tools/proftrace/stats/launch_bound_stretches.h"
#include "tools/proftrace/stats/recommendation_finding.h"
#include "tools/proftrace/stats/stack_joins.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/step_detection.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

constexpr size_t kMaxCandidates = size_t{1} << 20;

enum Rule : uint8_t {
  kPageableCopy, kItemRead, kSync, kAllocator, kSmallGrid, kLaunchBound, kStraggler, kExposedComm, kIdleGap,
  kDeviceState, kRuleCount
};
constexpr std::array<const char*, kRuleCount> kRuleNames = {"pageable-sync-copy", "item-read", "excessive-sync",
                                                           "steady-state-alloc", "small-grid",
                                                           "launch-bound", "straggler-rank",
                                                           "exposed-communication", "gpu-idle-gap",
                                                           "device-state"};

bool host_memory_is_pageable(uint8_t kind) { return kind == static_cast<uint8_t>(MemoryKind::kPageableHost); }

class Recommendations final : public StatsSection {
 public:
  explicit Recommendations(const StatsOptions& options)
      : steps_(options.step_range) {
    sites_.push_back({});
  }
  std::string name() const override { return "recommendations"; }

  std::vector<interpret::Consumer*> parts() override {
    return {&steps_, &collectives_, &idle_gaps_, &cpu_, &device_metrics_};
  }

  void on_operation_read(const interpret::Operation& op) override {
    if (op.kind == interpret::OperationKind::kCopy) on_copy(op);
    else if (op.kind == interpret::OperationKind::kKernel) on_launch(op);
  }

  // A small-grid launch with its kernel's GPU time.
  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    if (op.kind != interpret::OperationKind::kKernel) return;
    const auto pending = small_grid_launches_.find(Correlation{op.section->id, op.span().correlation_id});
    if (pending == small_grid_launches_.end()) return;
    if (gpu != nullptr && gpu->activity.kind == static_cast<uint8_t>(GpuActivityKind::kKernel))
      small_grid_ran(pending->second, gpu->duration_ns());
    small_grid_launches_.erase(pending);
  }

  void on_gpu_work_read(const interpret::GpuWork& work) override {
    const GpuActivityRecord& activity = work.activity;
    const bool kernel = activity.kind == static_cast<uint8_t>(GpuActivityKind::kKernel);
    const auto [device, added] = devices_.emplace(std::make_pair(work.section->id, activity.device), devices_.size());
    // Who launched it: the stack of its launch, when the pass has joined the two by now.
    uint32_t site = 0;
    if (work.operation != nullptr && stacks_at(work.operation->stacks, StackPoint::kLaunch))
      site = site_of(stack_key(work.section, work.operation->stacks));
    stretches_.add(device->second, activity.start_ns, activity.end_ns, kernel && work.duration_ns() < kShortKernelNs,
                   site);
    if (kernel) kernel_gpu_ns_ += work.duration_ns();
  }

  void on_synchronize(const interpret::SynchronizeEvent& e) override {
    const SynchronizeRecord& sync = e.record;
    const auto target = static_cast<SyncTarget>(sync.target);
    if (sync.span.result == 0 && !(sync.span.flags & kApiCarried) &&
        (target == SyncTarget::kDevice || target == SyncTarget::kStream || target == SyncTarget::kEvent))
      add(kSync, sync.span, 0, site_of(e.section, e.stacks));
  }

  void on_memory_operation(const interpret::Event<MemoryOperationRecord>& e) override {
    const MemoryOperationRecord& op = e.record;
    const auto kind = static_cast<AllocationKind>(op.kind);
    const auto action = static_cast<MemoryAction>(op.action);
    if (op.span.result == 0 && !(op.span.flags & (kApiCarried | kApiCaptured)) &&
        (kind == AllocationKind::kDevice || kind == AllocationKind::kPinnedHost || kind == AllocationKind::kManaged) &&
        (action == MemoryAction::kAcquire || action == MemoryAction::kRelease))
      add(kAllocator, op.span, op.bytes, site_of(e.section, e.stacks));
  }

  Table finish(const TraceModel& model) override;

 private:
  struct SmallGridLaunch {
    std::string kernel;
    uint64_t blocks = 0;
    uint32_t multiprocessors = 0;
    size_t candidate = SIZE_MAX;  // SIZE_MAX: past kMaxCandidates
  };

  // Fewer blocks than the device has SMs: most SMs idle while it runs.
  void on_launch(const interpret::Operation& op) {
    const KernelLaunchRecord& launch = op.launch;
    if (launch.span.result != 0 || (launch.span.flags & (kApiCaptured | kApiCarried)) ||
        (launch.launch_flags & kLaunchHostFunction))
      return;
    const SectionModel& section = *op.section->model;
    const auto device = section.devices.find(launch.device);
    if (device == section.devices.end() || device->second.multiprocessor_count == 0) return;
    const uint64_t blocks = uint64_t{launch.grid.x} * launch.grid.y * launch.grid.z;
    if (blocks >= device->second.multiprocessor_count) return;
    const FunctionDefRecord* function = section.function_def(launch.function, launch.span.begin_ns);
    SmallGridLaunch pending{function != nullptr ? demangle(std::string(section.string(function->name_string)))
                                                : std::string("<unnamed kernel>"),
                            blocks, device->second.multiprocessor_count};
    if (add(kSmallGrid, launch.span, 0, site_of(op.section, op.stacks)))
      pending.candidate = candidates_[kSmallGrid].size() - 1;
    small_grid_launches_[Correlation{section.section_id, launch.span.correlation_id}] = pending;
  }

  void small_grid_ran(const SmallGridLaunch& launch, uint64_t gpu_ns) {
    if (launch.candidate != SIZE_MAX) candidates_[kSmallGrid][launch.candidate].gpu_ns = gpu_ns;
    totals_[kSmallGrid].gpu_ns += gpu_ns;
    SmallGridKernel& kernel = small_grid_kernels_[launch.kernel];
    ++kernel.launches;
    kernel.gpu_ns += gpu_ns;
    kernel.min_blocks = std::min(kernel.min_blocks, launch.blocks);
    kernel.multiprocessors = launch.multiprocessors;
  }

  void on_copy(const interpret::Operation& op) {
    const MemoryCopyRecord& copy = op.copy;
    if (copy.span.result != 0 || (copy.span.flags & (kApiCaptured | kApiCarried))) return;
    const bool synchronous = !(copy.span.flags & kApiAsync);
    const auto direction = static_cast<CopyDirection>(copy.direction);
    const bool pageable = (direction == CopyDirection::kHostToDevice && host_memory_is_pageable(copy.src_kind)) ||
                          (direction == CopyDirection::kDeviceToHost && host_memory_is_pageable(copy.dst_kind));
    const uint32_t site = site_of(op.section, op.stacks);
    if (synchronous && pageable) add(kPageableCopy, copy.span, copy.bytes, site);
    // PyTorch's .item() is an async copy into pageable memory and a stream
    // sync: the copy cannot overlap either way.
    if (direction == CopyDirection::kDeviceToHost && copy.bytes <= kSmallReadBytes &&
        (synchronous || host_memory_is_pageable(copy.dst_kind)))
      add(kItemRead, copy.span, copy.bytes, site);
  }

  // False when past the cap (counted in the totals only).
  bool add(Rule rule, const ApiSpan& span, uint64_t bytes, uint32_t site) {
    Candidate candidate{span.begin_ns, span.end_ns > span.begin_ns ? span.end_ns - span.begin_ns : 0, bytes, 0};
    totals_[rule].add(candidate);
    if (candidates_[rule].size() >= kMaxCandidates) {
      ++over_cap_[rule];
      return false;
    }
    candidate.site = site;
    candidates_[rule].push_back(candidate);
    return true;
  }

  // The index of a call's stacks (0: it has none).
  uint32_t site_of(const interpret::Section* section, const interpret::Stacks& stacks) {
    return stacks.empty() ? 0 : site_of(stack_key(section, stacks));
  }
  uint32_t site_of(const StackKey& key) {
    const auto [it, added] = site_index_.emplace(key, uint32_t(sites_.size()));
    if (added) sites_.push_back(key);
    return it->second;
  }

  uint64_t analysed_ns() const {
    return steps_.last_ns() > steps_.first_ns() ? steps_.last_ns() - steps_.first_ns() : 0;
  }

  StepDetector steps_;
  std::array<std::vector<Candidate>, kRuleCount> candidates_;
  std::array<Totals, kRuleCount> totals_;
  std::array<uint64_t, kRuleCount> over_cap_{};
  std::map<StackKey, uint32_t> site_index_;
  std::vector<StackKey> sites_;  // [0]: no stack
  // Small-grid launches until the pass hands over their GPU work.
  std::unordered_map<Correlation, SmallGridLaunch, CorrelationHash> small_grid_launches_;
  std::map<std::string, SmallGridKernel> small_grid_kernels_;
  uint64_t kernel_gpu_ns_ = 0;
  LaunchBoundStretches stretches_;
  CollectiveAnalysis collectives_;
  GpuIdleGaps idle_gaps_;
  GpuMetricSeries device_metrics_;
  CpuActivity cpu_;  // samples and waits: what the threads did in the gaps
  std::map<std::pair<uint64_t, int32_t>, uint64_t> devices_;  // (section, device) -> stretches_' key
  std::vector<Candidate> stretch_sites_;  // launch-bound's call sites, made at the end
};

Table Recommendations::finish(const TraceModel& model) {
  std::string method;
  std::vector<Step> steps = steps_.find_steps(&method);
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.begin_ns < b.begin_ns; });

  stretches_.finish();
  std::array<Finding, kRuleCount> findings = {
      pageable_copies(candidates_[kPageableCopy], totals_[kPageableCopy]),
      item_reads(candidates_[kItemRead], totals_[kItemRead], steps),
      synchronizations(candidates_[kSync], totals_[kSync], steps, analysed_ns()),
      steady_state_allocations(candidates_[kAllocator], steps, steps_.first_ns(), analysed_ns()),
      small_grids(candidates_[kSmallGrid], totals_[kSmallGrid], kernel_gpu_ns_, small_grid_kernels_),
      launch_bound(stretches_, &stretch_sites_),
      Finding{},
      Finding{},
      Finding{},
      Finding{}};
  collectives_.finish(model);
  findings[kStraggler] = straggler_rank(collectives_);
  findings[kExposedComm] = exposed_communication(collectives_);
  idle_gaps_.finish();
  StackFormatter formatter;
  findings[kIdleGap] = idle_gaps(idle_gaps_, steps, steps_.first_ns(), steps_.last_ns(), model, formatter,
                                 cpu_.empty() ? nullptr : &cpu_);
  findings[kDeviceState] = device_state(device_metrics_.finish(model));
  Table table;
  table.title = "Recommendations: rules checked, with their evidence";
  table.columns = {"Rule", "Result", "Calls", "Bytes", "Host Time (ns)", "GPU Time (ns)", "Steps", "Finding",
                   "Call Sites"};
  std::vector<std::string> clean;
  for (size_t r = 0; r < kRuleCount; ++r) {
    const Finding& f = findings[r];
    table.rows.push_back({kRuleNames[r], f.found ? "found" : "nothing found", std::to_string(f.totals.count),
                          std::to_string(f.totals.bytes), std::to_string(f.totals.host_ns),
                          std::to_string(f.totals.gpu_ns),
                          f.steps.empty() ? "-" : f.steps, f.text,
                          !f.found                 ? "-"
                          : !f.call_sites.empty() ? f.call_sites
                                                  : call_sites(model, formatter, sites_, f.sited,
                                                               r == kSmallGrid || r == kLaunchBound)});
    if (!f.found) clean.push_back(kRuleNames[r]);
    if (over_cap_[r] > 0)
      table.notes.push_back(std::string(kRuleNames[r]) + ": steps and call sites count the first " +
                            std::to_string(kMaxCandidates) + " calls; " + std::to_string(over_cap_[r]) +
                            " later ones are in the run totals only");
  }
  table.notes.push_back(clean.size() == kRuleCount
                            ? "every rule was checked and none found a problem"
                            : std::to_string(kRuleCount - clean.size()) + " of " + std::to_string(kRuleCount) +
                                  " rules found a problem");
  if (!clean.empty()) {
    std::string names;
    for (const std::string& n : clean) names += (names.empty() ? "" : ", ") + n;
    table.notes.push_back("checked, nothing found: " + names);
  }
  if (idle_gaps_.gaps_over_cap() > 0)
    table.notes.push_back("gpu-idle-gap: " + std::to_string(idle_gaps_.gaps_over_cap()) + " gaps past the first " +
                          std::to_string(kMaxIdleGaps) + " were not judged");
  if (idle_gaps_.late_activities() > 0)
    table.notes.push_back("gpu-idle-gap: " + std::to_string(idle_gaps_.late_activities()) +
                          " GPU activities came too late in the file to be placed in time order; a gap they fall "
                          "in may be overstated");
  table.notes.push_back(method);
  table.notes.push_back("thresholds: tools/README.md, \"recommendations\"");
  return table;
}

}  // namespace

std::unique_ptr<StatsSection> make_recommendations(const StatsOptions& options) {
  return std::make_unique<Recommendations>(options);
}

}  // namespace proflaunch::tools::stats
