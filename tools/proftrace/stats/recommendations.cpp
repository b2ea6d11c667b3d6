// recommendations: rules in the spirit of `nsys analyze` and the PyTorch
// profiler's TensorBoard advice, each checked against the trace and
// reported with its evidence (counts, bytes, host time, steps) and the
// user's call sites (StackFormatter::attribute: the Python line first). A
// rule that finds nothing says so, so a clean trace reads as clean. The
// rules and their thresholds are in tools/README.md, "recommendations".
//
// Steps are the overview's (StepDetector). They are known only at the end,
// so each call a rule looks at (a candidate) is kept as a few numbers until
// then; at most kMaxCandidates per rule, past which the totals stay exact
// but steps and call sites are counted on the first ones (a note says so).
// Per call site: its stacks' ids; per thread: the call awaiting its stack.
#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <map>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/collective_analysis.h"
#include "tools/proftrace/stats/gpu_time_join.h"
#include "tools/proftrace/stats/launch_bound_stretches.h"
#include "tools/proftrace/stats/recommendation_finding.h"
#include "tools/proftrace/stats/stack_joins.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/step_detection.h"

namespace proflaunch::tools::stats {
namespace {

using namespace format;

constexpr size_t kMaxCandidates = size_t{1} << 20;
constexpr size_t kSitesShown = 3;

// Thresholds (tools/README.md's table says the same).
constexpr uint64_t kSmallReadBytes = 4096;           // item-read: a DtoH copy this small or smaller
constexpr size_t kMinSteps = 3;                      // item-read: steps needed to speak of "most steps"
constexpr double kSyncsPerStep = 2;                  // excessive-sync: per step, on average
constexpr uint64_t kSyncsWithoutSteps = 10;          // excessive-sync: in the run when no steps were found
constexpr double kSyncWaitShare = 0.05;              // excessive-sync: host wait / analysed time
constexpr double kWarmupShare = 0.10;                // steady-state-alloc: without steps, the first 10% is warm-up
constexpr uint64_t kAllocCallsWithoutSteps = 10;     // steady-state-alloc: without steps, in the last 90%
constexpr double kSmallGridShare = 0.10;             // small-grid: their share of all kernel GPU time
constexpr size_t kKernelsShown = 3;

enum Rule : uint8_t {
  kPageableCopy, kItemRead, kSync, kAllocator, kSmallGrid, kLaunchBound, kStraggler, kExposedComm, kRuleCount
};
constexpr std::array<const char*, kRuleCount> kRuleNames = {"pageable-sync-copy", "item-read", "excessive-sync",
                                                           "steady-state-alloc", "small-grid",
                                                           "launch-bound", "straggler-rank",
                                                           "exposed-communication"};

bool host_memory_is_pageable(uint8_t kind) { return kind == static_cast<uint8_t>(MemoryKind::kPageableHost); }

class Recommendations final : public StatsSection {
 public:
  explicit Recommendations(const StatsOptions& options)
      : steps_(options.step_range),
        small_grid_join_([this](const SmallGridLaunch& launch, uint64_t gpu_ns) { small_grid_ran(launch, gpu_ns); },
                         [](const SmallGridLaunch&) {}) {
    sites_.push_back({});
  }
  std::string name() const override { return "recommendations"; }

  void on_record(const SectionModel& section, const RecordView& record) override {
    steps_.on_record(section, record);
    collectives_.on_record(section, record);
    const std::pair<uint64_t, uint32_t> thread{section.section_id, record.tid};
    if (record.record_kind() == RecordKind::kCallStack) {
      const auto stack = record.as<CallStackRecord>();
      auto it = awaiting_stack_.find(thread);
      if (stack.point == static_cast<uint8_t>(StackPoint::kLaunch)) remember_launch_site(section, stack);
      if (it != awaiting_stack_.end() && it->second.correlation == stack.correlation_id) {
        const uint32_t site = site_of(StackKey{section.section_id, stack.native_stack, stack.python_stack});
        for (const auto& [rule, index] : it->second.candidates) candidates_[rule][index].site = site;
        awaiting_stack_.erase(it);
      }
      return;
    }
    // A CallStack follows its call right away on the call's thread: any
    // other record there means the call has none.
    awaiting_stack_.erase(thread);
    switch (record.record_kind()) {
      case RecordKind::kMemoryCopy: on_copy(thread, record.as<MemoryCopyRecord>()); break;
      case RecordKind::kKernelLaunch: on_launch(section, thread, record.as<KernelLaunchRecord>()); break;
      case RecordKind::kGpuActivity: {
        const auto activity = record.as<GpuActivityRecord>();
        const bool kernel = activity.kind == static_cast<uint8_t>(GpuActivityKind::kKernel);
        const auto [device, added] =
            devices_.emplace(std::make_pair(section.section_id, activity.device), devices_.size());
        stretches_.add(device->second, activity.start_ns, activity.end_ns,
                       kernel && gpu_duration_ns(activity) < kShortKernelNs,
                       launch_site(section.section_id, activity.correlation_id));
        if (!kernel) break;
        kernel_gpu_ns_ += gpu_duration_ns(activity);
        small_grid_join_.add_activity(section.section_id, activity.correlation_id, gpu_duration_ns(activity));
        break;
      }
      case RecordKind::kSynchronize: {
        const auto sync = record.as<SynchronizeRecord>();
        const auto target = static_cast<SyncTarget>(sync.target);
        if (sync.span.result == 0 && !(sync.span.flags & kApiCarried) &&
            (target == SyncTarget::kDevice || target == SyncTarget::kStream || target == SyncTarget::kEvent))
          add(thread, kSync, sync.span, 0);
        break;
      }
      case RecordKind::kMemoryOperation: {
        const auto op = record.as<MemoryOperationRecord>();
        const auto kind = static_cast<AllocationKind>(op.kind);
        const auto action = static_cast<MemoryAction>(op.action);
        if (op.span.result == 0 && !(op.span.flags & (kApiCarried | kApiCaptured)) &&
            (kind == AllocationKind::kDevice || kind == AllocationKind::kPinnedHost ||
             kind == AllocationKind::kManaged) &&
            (action == MemoryAction::kAcquire || action == MemoryAction::kRelease))
          add(thread, kAllocator, op.span, op.bytes);
        break;
      }
      default: break;
    }
  }

  Table finish(const TraceModel& model) override;

 private:
  struct SmallGridLaunch {
    std::string kernel;
    uint64_t blocks = 0;
    uint32_t multiprocessors = 0;
    size_t candidate = SIZE_MAX;  // SIZE_MAX: past kMaxCandidates
  };
  struct SmallGridKernel {
    uint64_t launches = 0, gpu_ns = 0, min_blocks = UINT64_MAX;
    uint32_t multiprocessors = 0;
  };

  // Fewer blocks than the device has SMs: most SMs idle while it runs.
  void on_launch(const SectionModel& section, const std::pair<uint64_t, uint32_t>& thread,
                 const KernelLaunchRecord& launch) {
    if (launch.span.result != 0 || (launch.span.flags & (kApiCaptured | kApiCarried)) ||
        (launch.launch_flags & kLaunchHostFunction))
      return;
    const auto device = section.devices.find(launch.device);
    if (device == section.devices.end() || device->second.multiprocessor_count == 0) return;
    const uint64_t blocks = uint64_t{launch.grid.x} * launch.grid.y * launch.grid.z;
    if (blocks >= device->second.multiprocessor_count) return;
    const FunctionDefRecord* function = section.function_def(launch.function, launch.span.begin_ns);
    SmallGridLaunch pending{function != nullptr ? demangle(std::string(section.string(function->name_string)))
                                                : std::string("<unnamed kernel>"),
                            blocks, device->second.multiprocessor_count};
    if (add(thread, kSmallGrid, launch.span, 0)) pending.candidate = candidates_[kSmallGrid].size() - 1;
    small_grid_join_.add_operation(section.section_id, launch.span.correlation_id, pending);
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

  // Launch stacks by correlation, for launch-bound (the activity comes
  // later): a bounded FIFO window, as in stack_joins.h.
  void remember_launch_site(const SectionModel& section, const CallStackRecord& stack) {
    const Correlation key{section.section_id, stack.correlation_id};
    launch_sites_[key] = site_of(StackKey{section.section_id, stack.native_stack, stack.python_stack});
    launch_order_.push_back(key);
    while (launch_order_.size() > kGpuTimeJoinWindow) {
      launch_sites_.erase(launch_order_.front());
      launch_order_.pop_front();
    }
  }
  uint32_t launch_site(uint64_t section, uint64_t correlation) {
    const auto it = launch_sites_.find(Correlation{section, correlation});
    if (it == launch_sites_.end()) return 0;
    const uint32_t site = it->second;
    launch_sites_.erase(it);
    return site;
  }

  struct Awaiting {
    uint64_t correlation = 0;
    std::vector<std::pair<Rule, size_t>> candidates;
  };

  void on_copy(const std::pair<uint64_t, uint32_t>& thread, const MemoryCopyRecord& copy) {
    if (copy.span.result != 0 || (copy.span.flags & (kApiCaptured | kApiCarried))) return;
    const bool synchronous = !(copy.span.flags & kApiAsync);
    const auto direction = static_cast<CopyDirection>(copy.direction);
    const bool pageable = (direction == CopyDirection::kHostToDevice && host_memory_is_pageable(copy.src_kind)) ||
                          (direction == CopyDirection::kDeviceToHost && host_memory_is_pageable(copy.dst_kind));
    if (synchronous && pageable) add(thread, kPageableCopy, copy.span, copy.bytes);
    // PyTorch's .item() is an async copy into pageable memory and a stream
    // sync: the copy cannot overlap either way.
    if (direction == CopyDirection::kDeviceToHost && copy.bytes <= kSmallReadBytes &&
        (synchronous || host_memory_is_pageable(copy.dst_kind)))
      add(thread, kItemRead, copy.span, copy.bytes);
  }

  // False when past the cap (counted in the totals only).
  bool add(const std::pair<uint64_t, uint32_t>& thread, Rule rule, const ApiSpan& span, uint64_t bytes) {
    const Candidate candidate{span.begin_ns, span.end_ns > span.begin_ns ? span.end_ns - span.begin_ns : 0, bytes, 0};
    totals_[rule].add(candidate);
    if (candidates_[rule].size() >= kMaxCandidates) {
      ++over_cap_[rule];
      return false;
    }
    candidates_[rule].push_back(candidate);
    Awaiting& awaiting = awaiting_stack_[thread];
    awaiting.correlation = span.correlation_id;
    awaiting.candidates.emplace_back(rule, candidates_[rule].size() - 1);
    return true;
  }

  uint32_t site_of(const StackKey& key) {
    const auto [it, added] = site_index_.emplace(key, uint32_t(sites_.size()));
    if (added) sites_.push_back(key);
    return it->second;
  }

  Finding pageable_copies() const;
  Finding item_reads(const std::vector<Step>& steps) const;
  Finding synchronizations(const std::vector<Step>& steps) const;
  Finding steady_state_allocations(const std::vector<Step>& steps) const;
  Finding small_grids();
  Finding launch_bound();
  std::string call_sites(const TraceModel& model, StackFormatter& formatter,
                         const std::vector<const Candidate*>& sited, bool gpu_side) const;
  uint64_t analysed_ns() const {
    return steps_.last_ns() > steps_.first_ns() ? steps_.last_ns() - steps_.first_ns() : 0;
  }

  StepDetector steps_;
  std::array<std::vector<Candidate>, kRuleCount> candidates_;
  std::array<Totals, kRuleCount> totals_;
  std::array<uint64_t, kRuleCount> over_cap_{};
  std::map<std::pair<uint64_t, uint32_t>, Awaiting> awaiting_stack_;
  std::map<StackKey, uint32_t> site_index_;
  std::vector<StackKey> sites_;  // [0]: no stack
  GpuTimeJoin<SmallGridLaunch> small_grid_join_;
  std::map<std::string, SmallGridKernel> small_grid_kernels_;
  uint64_t kernel_gpu_ns_ = 0;
  LaunchBoundStretches stretches_;
  CollectiveAnalysis collectives_;
  std::map<std::pair<uint64_t, int32_t>, uint64_t> devices_;  // (section, device) -> stretches_' key
  std::unordered_map<Correlation, uint32_t, CorrelationHash> launch_sites_;
  std::deque<Correlation> launch_order_;
  std::vector<Candidate> stretch_sites_;  // launch-bound's call sites, made at the end
};

// The step that contains `ns` (steps sorted by begin), or -1.
long step_of(const std::vector<Step>& steps, uint64_t ns) {
  auto it = std::upper_bound(steps.begin(), steps.end(), ns,
                             [](uint64_t t, const Step& s) { return t < s.begin_ns; });
  if (it == steps.begin()) return -1;
  --it;
  return ns < it->end_ns ? long(it - steps.begin()) : -1;
}

std::string ms(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", double(ns) / 1e6);
  return text;
}

std::vector<const Candidate*> all_of(const std::vector<Candidate>& candidates) {
  std::vector<const Candidate*> out;
  for (const Candidate& c : candidates) out.push_back(&c);
  return out;
}

Finding Recommendations::pageable_copies() const {
  Finding f;
  f.totals = totals_[kPageableCopy];
  f.found = f.totals.count > 0;
  if (!f.found) {
    f.text = "no synchronous copy from or to pageable host memory";
    return f;
  }
  f.sited = all_of(candidates_[kPageableCopy]);
  f.text = std::to_string(f.totals.count) + " synchronous copies between the GPU and pageable host memory (" +
           std::to_string(f.totals.bytes) + " bytes, " + ms(f.totals.host_ns) +
           " on the host): the driver stages them through a pinned buffer and the host waits; use pinned memory "
           "(cudaMallocHost, tensor.pin_memory()) and cudaMemcpyAsync (non_blocking=True)";
  return f;
}

Finding Recommendations::item_reads(const std::vector<Step>& steps) const {
  Finding f;
  std::vector<bool> seen(steps.size(), false);
  for (const Candidate& c : candidates_[kItemRead]) {
    const long step = step_of(steps, c.begin_ns);
    if (step < 0) continue;
    seen[size_t(step)] = true;
    f.totals.add(c);
    f.sited.push_back(&c);
  }
  const size_t with_reads = size_t(std::count(seen.begin(), seen.end(), true));
  f.steps = std::to_string(with_reads) + "/" + std::to_string(steps.size());
  if (steps.size() < kMinSteps) {
    f.totals = totals_[kItemRead];
    f.sited.clear();
    f.text = "not judged: fewer than " + std::to_string(kMinSteps) + " steps were found (" +
             std::to_string(totals_[kItemRead].count) + " small device-to-host reads in the run)";
    return f;
  }
  f.found = with_reads * 2 > steps.size();
  if (!f.found) {
    f.text = "small device-to-host reads in " + f.steps + " steps: not in most of them";
    return f;
  }
  f.text = std::to_string(f.totals.count) + " device-to-host reads of at most " + std::to_string(kSmallReadBytes) +
           " bytes in " + f.steps + " steps (" + ms(f.totals.host_ns) +
           " on the host): each waits for the GPU to drain (the .item() / .cpu() / print(tensor) pattern); keep "
           "the value on the GPU, or read it every N steps";
  return f;
}

Finding Recommendations::synchronizations(const std::vector<Step>& steps) const {
  Finding f;
  for (const Candidate& c : candidates_[kSync])
    if (steps.empty() || step_of(steps, c.begin_ns) >= 0) {
      f.totals.add(c);
      f.sited.push_back(&c);
    }
  const double analysed = double(analysed_ns());
  const double share = analysed > 0 ? double(totals_[kSync].host_ns) / analysed : 0;
  bool many = false;
  if (!steps.empty()) {
    const double per_step = double(f.totals.count) / double(steps.size());
    char text[32];
    std::snprintf(text, sizeof text, "%.1f/step", per_step);
    f.steps = text;
    many = per_step >= kSyncsPerStep;
  } else {
    many = f.totals.count >= kSyncsWithoutSteps;
  }
  f.found = many && share >= kSyncWaitShare;
  const std::string what = std::to_string(f.totals.count) + " device, stream and event synchronizations" +
                           (steps.empty() ? "" : " in steps (" + f.steps + ")") + ", " +
                           ms(totals_[kSync].host_ns) + " of host wait (" + format_percent(share) + "% of the run)";
  if (!f.found) {
    f.text = what + ": below the thresholds";
    return f;
  }
  f.text = what + ": each one stalls the host until the GPU catches up and empties the launch queue; "
           "synchronize once per step at most, and wait on events for the work that is needed";
  return f;
}

Finding Recommendations::steady_state_allocations(const std::vector<Step>& steps) const {
  Finding f;
  // With steps: inside the steps after the first (set-up before the loop
  // and teardown after it are not the steady state); else after warm-up.
  const uint64_t steady_from = steps_.first_ns() + uint64_t(double(analysed_ns()) * kWarmupShare);
  const std::string from = steps.empty() ? "after the first 10% of the run" : "in the steps after the first";
  for (const Candidate& c : candidates_[kAllocator])
    if (steps.empty() ? c.begin_ns >= steady_from : step_of(steps, c.begin_ns) > 0) {
      f.totals.add(c);
      f.sited.push_back(&c);
    }
  const uint64_t wanted = steps.empty() ? kAllocCallsWithoutSteps : std::max<uint64_t>(1, steps.size() - 1);
  if (!steps.empty()) f.steps = std::to_string(steps.size() - 1) + " later steps";
  f.found = f.totals.count >= wanted;
  const std::string what = std::to_string(f.totals.count) + " allocator calls (cudaMalloc, cudaFree, cuMemAlloc, "
                           "pinned and managed allocations and their frees) " + from + ", " + ms(f.totals.host_ns) +
                           " on the host";
  if (!f.found) {
    f.text = what + ": below the threshold";
    return f;
  }
  f.text = what + ": each may synchronize the device; allocate once before the loop and reuse the buffers (or "
           "a caching allocator / cudaMallocAsync pool)";
  return f;
}

Finding Recommendations::small_grids() {
  small_grid_join_.finish();
  Finding f;
  f.totals = totals_[kSmallGrid];
  const double share = kernel_gpu_ns_ > 0 ? double(f.totals.gpu_ns) / double(kernel_gpu_ns_) : 0;
  const std::string what = std::to_string(f.totals.count) + " launches with fewer blocks than the GPU has SMs, " +
                           std::to_string(f.totals.gpu_ns) + " ns of GPU time (" + format_percent(share) +
                           "% of all kernel time)";
  f.found = f.totals.count > 0 && share >= kSmallGridShare;
  if (!f.found) {
    f.text = what + ": below the threshold";
    return f;
  }
  std::vector<std::pair<std::string, SmallGridKernel>> kernels(small_grid_kernels_.begin(), small_grid_kernels_.end());
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const auto& a, const auto& b) { return a.second.gpu_ns > b.second.gpu_ns; });
  std::string listed;
  for (size_t i = 0; i < kernels.size() && i < kKernelsShown; ++i) {
    const SmallGridKernel& k = kernels[i].second;
    listed += (listed.empty() ? "" : "; ") + kernels[i].first + " (" + std::to_string(k.min_blocks) +
              (k.min_blocks == 1 ? " block" : " blocks") + " on " + std::to_string(k.multiprocessors) + " SMs, " +
              std::to_string(k.launches) + " launches, " + std::to_string(k.gpu_ns) + " ns)";
  }
  f.sited = all_of(candidates_[kSmallGrid]);
  f.text = what + ": " + listed + "; most SMs are idle while they run: give them larger grids, batch the work "
           "or fuse the kernels";
  return f;
}

Finding Recommendations::launch_bound() {
  stretches_.finish();
  Finding f;
  const LaunchBoundStretches::Amounts& t = stretches_.total();
  f.totals.count = t.kernels;
  f.totals.gpu_ns = t.busy_ns;
  f.found = stretches_.stretches() > 0;
  if (!f.found) {
    f.text = "no run of " + std::to_string(kMinStretchKernels) + " or more kernels shorter than " +
             std::to_string(kShortKernelNs / 1000) + " us with more idle GPU than busy between them";
    return f;
  }
  for (const auto& [site, amounts] : stretches_.by_site())
    stretch_sites_.push_back(Candidate{0, 0, 0, site, amounts.busy_ns, amounts.kernels});
  for (const Candidate& c : stretch_sites_) f.sited.push_back(&c);
  f.text = std::to_string(stretches_.stretches()) + (stretches_.stretches() == 1 ? " stretch" : " stretches") + " of " + std::to_string(t.kernels) +
           " short kernels: the GPU was busy " + std::to_string(t.busy_ns) + " ns and idle " +
           std::to_string(t.idle_ns) + " ns between them, waiting for launches; fuse the kernels, use CUDA "
           "graphs (torch.compile mode=\"reduce-overhead\") or larger batches";
  return f;
}

// The candidates' call sites, most calls first: "site (N calls, T ms)".
// `gpu_side`: kernels, shown by launches and GPU time; else calls and host time.
std::string Recommendations::call_sites(const TraceModel& model, StackFormatter& formatter,
                                        const std::vector<const Candidate*>& sited, bool gpu_side) const {
  std::map<uint32_t, Totals> by_site;
  for (const Candidate* c : sited) by_site[c->site].add(*c);
  // Different stacks that end at the same line are one site.
  std::map<std::string, Totals> by_text;
  for (const auto& [site, totals] : by_site) {
    std::string text = "(no call stack)";
    if (site != 0) {
      const StackKey& key = sites_[site];
      if (const SectionModel* section = model.find(key.section)) {
        const std::string attributed = formatter.attribute(*section, key.native, key.python).text;
        if (!attributed.empty()) text = attributed;
      }
    }
    Totals& t = by_text[text];
    t.count += totals.count;
    t.bytes += totals.bytes;
    t.host_ns += totals.host_ns;
    t.gpu_ns += totals.gpu_ns;
  }
  std::vector<std::pair<std::string, Totals>> sorted(by_text.begin(), by_text.end());
  std::stable_sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    const Totals &x = a.second, &y = b.second;
    return gpu_side ? std::tie(x.gpu_ns, x.count) > std::tie(y.gpu_ns, y.count)
                    : std::tie(x.count, x.host_ns) > std::tie(y.count, y.host_ns);
  });
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < kSitesShown; ++i)
    out += (out.empty() ? "" : " | ") + sorted[i].first + " (" + std::to_string(sorted[i].second.count) +
           (gpu_side ? " launches, " + std::to_string(sorted[i].second.gpu_ns) + " ns GPU)"
                     : " calls, " + std::to_string(sorted[i].second.host_ns) + " ns)");
  if (sorted.size() > kSitesShown) out += " | " + std::to_string(sorted.size() - kSitesShown) + " more sites";
  return out;
}

Table Recommendations::finish(const TraceModel& model) {
  std::string method;
  std::vector<Step> steps = steps_.find_steps(&method);
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.begin_ns < b.begin_ns; });

  std::array<Finding, kRuleCount> findings = {pageable_copies(), item_reads(steps), synchronizations(steps),
                                                    steady_state_allocations(steps), small_grids(),
                                                    launch_bound(), Finding{}, Finding{}};
  collectives_.finish(model);
  findings[kStraggler] = straggler_rank(collectives_);
  findings[kExposedComm] = exposed_communication(collectives_);
  Table table;
  table.title = "Recommendations: rules checked, with their evidence";
  table.columns = {"Rule", "Result", "Calls", "Bytes", "Host Time (ns)", "GPU Time (ns)", "Steps", "Finding",
                   "Call Sites"};
  StackFormatter formatter;
  std::vector<std::string> clean;
  for (size_t r = 0; r < kRuleCount; ++r) {
    const Finding& f = findings[r];
    table.rows.push_back({kRuleNames[r], f.found ? "found" : "nothing found", std::to_string(f.totals.count),
                          std::to_string(f.totals.bytes), std::to_string(f.totals.host_ns),
                          std::to_string(f.totals.gpu_ns),
                          f.steps.empty() ? "-" : f.steps, f.text,
                          f.found ? call_sites(model, formatter, f.sited, r == kSmallGrid || r == kLaunchBound) : "-"});
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
  table.notes.push_back(method);
  table.notes.push_back("thresholds: tools/README.md, \"recommendations\"");
  return table;
}

}  // namespace

std::unique_ptr<StatsSection> make_recommendations(const StatsOptions& options) {
  return std::make_unique<Recommendations>(options);
}

}  // namespace proflaunch::tools::stats
