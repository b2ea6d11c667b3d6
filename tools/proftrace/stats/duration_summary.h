// Count, total, min, max, mean and standard deviation of durations, kept in
// constant space (Welford's running variance).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace proflaunch::tools::stats {

struct DurationSummary {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t min_ns = std::numeric_limits<uint64_t>::max();
  uint64_t max_ns = 0;
  double mean_ns = 0;
  double m2 = 0;

  void add(uint64_t ns) {
    ++count;
    total_ns += ns;
    if (ns < min_ns) min_ns = ns;
    if (ns > max_ns) max_ns = ns;
    const double delta = static_cast<double>(ns) - mean_ns;
    mean_ns += delta / static_cast<double>(count);
    m2 += delta * (static_cast<double>(ns) - mean_ns);
  }
  double stddev_ns() const { return count > 1 ? std::sqrt(m2 / static_cast<double>(count - 1)) : 0.0; }
};

}  // namespace proflaunch::tools::stats
