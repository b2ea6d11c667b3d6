// The rules of `recommendations` about host calls (copies, reads,
// synchronizations, allocations): each judges the calls the section kept
// as candidates against the steps, and says what it found.
#include <algorithm>

#include "tools/proftrace/stats/recommendation_finding.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

Finding pageable_copies(const std::vector<Candidate>& candidates, const Totals& totals) {
  Finding f;
  f.totals = totals;
  f.found = f.totals.count > 0;
  if (!f.found) {
    f.text = "no synchronous copy from or to pageable host memory";
    return f;
  }
  f.sited = all_of(candidates);
  f.text = std::to_string(f.totals.count) + " synchronous copies between the GPU and pageable host memory (" +
           std::to_string(f.totals.bytes) + " bytes, " + ms(f.totals.host_ns) +
           " on the host): the driver stages them through a pinned buffer and the host waits; use pinned memory "
           "(cudaMallocHost, tensor.pin_memory()) and cudaMemcpyAsync (non_blocking=True)";
  return f;
}

Finding item_reads(const std::vector<Candidate>& candidates, const Totals& totals, const std::vector<Step>& steps) {
  Finding f;
  std::vector<bool> seen(steps.size(), false);
  for (const Candidate& c : candidates) {
    const long step = step_of(steps, c.begin_ns);
    if (step < 0) continue;
    seen[size_t(step)] = true;
    f.totals.add(c);
    f.sited.push_back(&c);
  }
  const size_t with_reads = size_t(std::count(seen.begin(), seen.end(), true));
  f.steps = std::to_string(with_reads) + "/" + std::to_string(steps.size());
  if (steps.size() < kMinSteps) {
    f.totals = totals;
    f.sited.clear();
    f.text = "not judged: fewer than " + std::to_string(kMinSteps) + " steps were found (" +
             std::to_string(totals.count) + " small device-to-host reads in the run)";
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

Finding synchronizations(const std::vector<Candidate>& candidates, const Totals& totals,
                         const std::vector<Step>& steps, uint64_t analysed_ns) {
  Finding f;
  for (const Candidate& c : candidates)
    if (steps.empty() || step_of(steps, c.begin_ns) >= 0) {
      f.totals.add(c);
      f.sited.push_back(&c);
    }
  const double analysed = double(analysed_ns);
  const double share = analysed > 0 ? double(totals.host_ns) / analysed : 0;
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
                           ms(totals.host_ns) + " of host wait (" + format_percent(share) + "% of the run)";
  if (!f.found) {
    f.text = what + ": below the thresholds";
    return f;
  }
  f.text = what + ": each one stalls the host until the GPU catches up and empties the launch queue; "
           "synchronize once per step at most, and wait on events for the work that is needed";
  return f;
}

Finding steady_state_allocations(const std::vector<Candidate>& candidates, const std::vector<Step>& steps,
                                 uint64_t first_ns, uint64_t analysed_ns) {
  Finding f;
  // With steps: inside the steps after the first (set-up before the loop
  // and teardown after it are not the steady state); else after warm-up.
  const uint64_t steady_from = first_ns + uint64_t(double(analysed_ns) * kWarmupShare);
  const std::string from = steps.empty() ? "after the first 10% of the run" : "in the steps after the first";
  for (const Candidate& c : candidates)
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

}  // namespace proflaunch::tools::stats
