// What a `recommendations` rule reports (recommendations.cpp): the calls it
// looked at, their totals, and its verdict; the thresholds and the rules,
// one function each, in the rule files (recommendation_*_rules.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/stats/stack_joins.h"
#include "tools/proftrace/stats/step_detection.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

// Thresholds (tools/README.md's table says the same).
inline constexpr uint64_t kSmallReadBytes = 4096;        // item-read: a DtoH copy this small or smaller
inline constexpr size_t kMinSteps = 3;                   // item-read: steps needed to speak of "most steps"
inline constexpr double kSyncsPerStep = 2;               // excessive-sync: per step, on average
inline constexpr uint64_t kSyncsWithoutSteps = 10;       // excessive-sync: in the run when no steps were found
inline constexpr double kSyncWaitShare = 0.05;           // excessive-sync: host wait / analysed time
inline constexpr double kWarmupShare = 0.10;             // steady-state-alloc: without steps, the first 10% is warm-up
inline constexpr uint64_t kAllocCallsWithoutSteps = 10;  // steady-state-alloc: without steps, in the last 90%
inline constexpr double kSmallGridShare = 0.10;          // small-grid: their share of all kernel GPU time
inline constexpr size_t kKernelsShown = 3;
inline constexpr size_t kSitesShown = 3;

// One call a rule looked at (or, for launch-bound, one call site's kernels).
struct Candidate {
  uint64_t begin_ns;
  uint64_t host_ns;
  uint64_t bytes;
  uint32_t site;        // the section's numbering of call sites; 0: no stack
  uint64_t gpu_ns = 0;  // small-grid: the launch's GPU time, once joined
  uint64_t calls = 1;   // launch-bound: one per call site, with its kernels
};

struct Totals {
  uint64_t count = 0, bytes = 0, host_ns = 0, gpu_ns = 0;
  void add(const Candidate& c) {
    count += c.calls;
    bytes += c.bytes;
    host_ns += c.host_ns;
    gpu_ns += c.gpu_ns;
  }
};

struct Finding {
  bool found = false;
  Totals totals;      // what the row shows
  std::string steps;  // the step evidence
  std::string text;   // what was found and what to do, or why nothing was
  std::vector<const Candidate*> sited;  // the candidates whose call sites are shown
  std::string call_sites;               // when set, the Call Sites column as the rule wrote it
};

// The step that contains `ns` (steps sorted by begin), or -1.
long step_of(const std::vector<Step>& steps, uint64_t ns);
std::string ms(uint64_t ns);  // "1.234 ms"
std::vector<const Candidate*> all_of(const std::vector<Candidate>& candidates);

// A call site as the user reads it (Call-site attribution: the Python line
// first), or "(no call stack)".
std::string site_text(const TraceModel& model, StackFormatter& formatter, const StackKey& key);
// The candidates' call sites, most calls first: "site (N calls, T ns)";
// `sites` maps a candidate's site number to its stacks ([0]: none).
// `gpu_side`: kernels, shown by launches and GPU time; else calls and host time.
std::string call_sites(const TraceModel& model, StackFormatter& formatter, const std::vector<StackKey>& sites,
                       const std::vector<const Candidate*>& sited, bool gpu_side);

// The host-call rules (recommendation_host_rules.cpp): each gets the calls
// it kept (candidates, at most the cap) and its totals over the whole run.
Finding pageable_copies(const std::vector<Candidate>& candidates, const Totals& totals);
Finding item_reads(const std::vector<Candidate>& candidates, const Totals& totals, const std::vector<Step>& steps);
Finding synchronizations(const std::vector<Candidate>& candidates, const Totals& totals,
                         const std::vector<Step>& steps, uint64_t analysed_ns);
Finding steady_state_allocations(const std::vector<Candidate>& candidates, const std::vector<Step>& steps,
                                 uint64_t first_ns, uint64_t analysed_ns);

// The kernel rules (recommendation_kernel_rules.cpp).
struct SmallGridKernel {
  uint64_t launches = 0, gpu_ns = 0, min_blocks = UINT64_MAX;
  uint32_t multiprocessors = 0;
};
Finding small_grids(const std::vector<Candidate>& candidates, const Totals& totals, uint64_t kernel_gpu_ns,
                    const std::map<std::string, SmallGridKernel>& kernels_by_name);
class LaunchBoundStretches;
// `sites`: filled with one candidate per call site of the stretches' kernels
// (the finding points into it).
Finding launch_bound(const LaunchBoundStretches& stretches, std::vector<Candidate>* sites);

// gpu-idle-gap (recommendation_idle_gap_rule.cpp): a gap of gpu_idle_gaps.h
// fires when its part in a step (no steps: the analysed time) is at least
// kIdleGapMinNs and kIdleGapStepShare of the step.
inline constexpr double kIdleGapStepShare = 0.05;
// With CPU samples and blocking calls (`cpu`, may be null), the finding
// also says what the launching thread and the busiest other threads of its
// process did during the longest gap and during all gaps, in shares of the
// gaps, from samples (their count x the sampling period) and waits.
class GpuIdleGaps;
class CpuActivity;
Finding idle_gaps(const GpuIdleGaps& gaps, const std::vector<Step>& steps, uint64_t first_ns, uint64_t last_ns,
                  const TraceModel& model, StackFormatter& formatter, const CpuActivity* cpu = nullptr);

class CollectiveAnalysis;

// The multi-rank rules, from nccl-ranks' analysis (after its finish()).
// straggler-rank: the rank the others waited for longest, when their wait
// is at least kStragglerWaitShare of all ranks' communication time.
inline constexpr double kStragglerWaitShare = 0.10;
Finding straggler_rank(const CollectiveAnalysis& analysis);
// exposed-communication: collective GPU time with no compute kernel running
// alongside on its rank, when at least kExposedCommunicationShare of all.
inline constexpr double kExposedCommunicationShare = 0.50;
Finding exposed_communication(const CollectiveAnalysis& analysis);

// device-state (recommendation_device_rule.cpp), from the launcher's device
// metrics: clocks held down at least kThrottledShare of the sampled time;
// memory used (every process) at least kMemoryNearFullShare of the device;
// a PCIe link that never reached its maximum generation or width.
inline constexpr double kThrottledShare = 0.05;
inline constexpr double kMemoryNearFullShare = 0.95;
struct DeviceMetrics;
Finding device_state(const std::vector<DeviceMetrics>& devices);

}  // namespace proflaunch::tools::stats
