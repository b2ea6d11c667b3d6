#include "tools/proftrace/stats/step_periodicity.h"

#include <unordered_map>

namespace proflaunch::tools::stats {

std::optional<Periodicity> find_periodicity(const std::vector<uint64_t>& kernels) {
  const size_t n = kernels.size();
  const size_t warmup = n / 10;
  if (n < warmup + 3) return std::nullopt;
  for (size_t p = 1; 3 * p <= n - warmup; ++p) {
    if (kernels[warmup + p] != kernels[warmup]) continue;
    const size_t compared = n - p - warmup;
    // Stop at the first mismatch past the 10% allowed: wrong periods fail fast.
    const size_t allowed = compared / 10;
    size_t mismatches = 0;
    for (size_t i = warmup; i + p < n && mismatches <= allowed; ++i) mismatches += kernels[i] != kernels[i + p];
    if (mismatches > allowed) continue;

    std::unordered_map<uint64_t, size_t> in_period;
    for (size_t i = warmup; i < warmup + p; ++i) ++in_period[kernels[i]];
    for (size_t i = 0; i < n; ++i) {  // first appearance, earliest first
      auto it = in_period.find(kernels[i]);
      if (it != in_period.end() && it->second == 1) return Periodicity{p, kernels[i]};
    }
    return std::nullopt;  // the smallest period has no kernel that runs once per step
  }
  return std::nullopt;
}

}  // namespace proflaunch::tools::stats
