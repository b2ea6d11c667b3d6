// The rules of `recommendations` about kernels: small-grid (launches that
// leave most SMs idle) and launch-bound (short kernels the host cannot
// launch fast enough, launch_bound_stretches.h).
#include <algorithm>

#include "tools/proftrace/stats/launch_bound_stretches.h"
#include "tools/proftrace/stats/recommendation_finding.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {

Finding small_grids(const std::vector<Candidate>& candidates, const Totals& totals, uint64_t kernel_gpu_ns,
                    const std::map<std::string, SmallGridKernel>& kernels_by_name) {
  Finding f;
  f.totals = totals;
  const double share = kernel_gpu_ns > 0 ? double(f.totals.gpu_ns) / double(kernel_gpu_ns) : 0;
  const std::string what = std::to_string(f.totals.count) + " launches with fewer blocks than the GPU has SMs, " +
                           std::to_string(f.totals.gpu_ns) + " ns of GPU time (" + format_percent(share) +
                           "% of all kernel time)";
  f.found = f.totals.count > 0 && share >= kSmallGridShare;
  if (!f.found) {
    f.text = what + ": below the threshold";
    return f;
  }
  std::vector<std::pair<std::string, SmallGridKernel>> kernels(kernels_by_name.begin(), kernels_by_name.end());
  std::stable_sort(kernels.begin(), kernels.end(),
                   [](const auto& a, const auto& b) { return a.second.gpu_ns > b.second.gpu_ns; });
  std::string listed;
  for (size_t i = 0; i < kernels.size() && i < kKernelsShown; ++i) {
    const SmallGridKernel& k = kernels[i].second;
    listed += (listed.empty() ? "" : "; ") + kernels[i].first + " (" + std::to_string(k.min_blocks) +
              (k.min_blocks == 1 ? " block" : " blocks") + " on " + std::to_string(k.multiprocessors) + " SMs, " +
              std::to_string(k.launches) + " launches, " + std::to_string(k.gpu_ns) + " ns)";
  }
  f.sited = all_of(candidates);
  f.text = what + ": " + listed + "; most SMs are idle while they run: give them larger grids, batch the work "
           "or fuse the kernels";
  return f;
}

Finding launch_bound(const LaunchBoundStretches& stretches, std::vector<Candidate>* sites) {
  Finding f;
  const LaunchBoundStretches::Amounts& t = stretches.total();
  f.totals.count = t.kernels;
  f.totals.gpu_ns = t.busy_ns;
  f.found = stretches.stretches() > 0;
  if (!f.found) {
    f.text = "no run of " + std::to_string(kMinStretchKernels) + " or more kernels shorter than " +
             std::to_string(kShortKernelNs / 1000) + " us with more idle GPU than busy between them";
    return f;
  }
  for (const auto& [site, amounts] : stretches.by_site())
    sites->push_back(Candidate{0, 0, 0, site, amounts.busy_ns, amounts.kernels});
  for (const Candidate& c : *sites) f.sited.push_back(&c);
  f.text = std::to_string(stretches.stretches()) + (stretches.stretches() == 1 ? " stretch" : " stretches") +
           " of " + std::to_string(t.kernels) + " short kernels: the GPU was busy " + std::to_string(t.busy_ns) +
           " ns and idle " + std::to_string(t.idle_ns) + " ns between them, waiting for launches; fuse the "
           "kernels, use CUDA graphs (torch.compile mode=\"reduce-overhead\") or larger batches";
  return f;
}

}  // namespace proflaunch::tools::stats
