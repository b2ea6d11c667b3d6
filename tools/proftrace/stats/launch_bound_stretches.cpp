#include "tools/proftrace/stats/launch_bound_stretches.h"

#include <algorithm>

namespace proflaunch::tools::stats {

void LaunchBoundStretches::add(uint64_t device, uint64_t start_ns, uint64_t end_ns, bool short_kernel,
                               uint32_t site) {
  Run& run = runs_[device];
  const uint64_t gap = run.amounts.kernels > 0 && start_ns > run.last_end_ns ? start_ns - run.last_end_ns : 0;
  if (!short_kernel || gap > kMaxLaunchGapNs) close(run);
  if (!short_kernel) {
    run.last_end_ns = end_ns;
    return;
  }
  const uint64_t busy = end_ns > start_ns ? end_ns - start_ns : 0;
  if (run.amounts.kernels > 0) run.amounts.idle_ns += gap;
  ++run.amounts.kernels;
  run.amounts.busy_ns += busy;
  Amounts& at_site = run.sites[site];
  ++at_site.kernels;
  at_site.busy_ns += busy;
  run.last_end_ns = std::max(run.last_end_ns, end_ns);
}

void LaunchBoundStretches::close(Run& run) {
  if (run.amounts.kernels >= kMinStretchKernels && run.amounts.idle_ns > run.amounts.busy_ns) {
    ++stretches_;
    total_.kernels += run.amounts.kernels;
    total_.busy_ns += run.amounts.busy_ns;
    total_.idle_ns += run.amounts.idle_ns;
    for (const auto& [site, amounts] : run.sites) {
      Amounts& sum = by_site_[site];
      sum.kernels += amounts.kernels;
      sum.busy_ns += amounts.busy_ns;
    }
  }
  run.amounts = {};
  run.sites.clear();
}

void LaunchBoundStretches::finish() {
  for (auto& [device, run] : runs_) close(run);
}

}  // namespace proflaunch::tools::stats
