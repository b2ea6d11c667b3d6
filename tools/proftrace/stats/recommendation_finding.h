// What a `recommendations` rule reports (recommendations.cpp): the calls it
// looked at, their totals, and its verdict. Shared by the rule files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proflaunch::tools::stats {

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
};

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

}  // namespace proflaunch::tools::stats
