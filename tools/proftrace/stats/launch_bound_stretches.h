// Launch-bound stretches for `recommendations`: runs of short kernels on one
// device where the GPU is idle more than it is busy between them, i.e. the
// host cannot launch fast enough (the TensorBoard plugin's "kernel launch
// overhead" advice). Fed the GPU activities of each device as they are read
// (roughly in time order per device; work that starts before the previous
// one ended counts no gap).
//
// A run grows while kernels shorter than kShortKernelNs follow each other
// with gaps of at most kMaxLaunchGapNs; any other work on the device (a
// longer kernel, a copy, a memset), or a longer gap, ends it. A run of at
// least kMinStretchKernels kernels whose gaps add up to more than their GPU
// time is a stretch. Memory: per device its current run and the run's call
// sites.
#pragma once

#include <cstdint>
#include <map>

namespace proflaunch::tools::stats {

inline constexpr uint64_t kShortKernelNs = 10'000;
inline constexpr uint64_t kMinStretchKernels = 10;
inline constexpr uint64_t kMaxLaunchGapNs = 1'000'000;

class LaunchBoundStretches {
 public:
  struct Amounts {
    uint64_t kernels = 0, busy_ns = 0, idle_ns = 0;
  };

  // `short_kernel`: a kernel shorter than kShortKernelNs; anything else ends
  // the device's run. `site`: who launched it (the caller's numbering).
  void add(uint64_t device, uint64_t start_ns, uint64_t end_ns, bool short_kernel, uint32_t site);
  // End of input: closes every device's run.
  void finish();

  uint64_t stretches() const { return stretches_; }
  const Amounts& total() const { return total_; }
  const std::map<uint32_t, Amounts>& by_site() const { return by_site_; }

 private:
  struct Run {
    uint64_t last_end_ns = 0;
    Amounts amounts;
    std::map<uint32_t, Amounts> sites;
  };
  void close(Run& run);

  std::map<uint64_t, Run> runs_;
  uint64_t stretches_ = 0;
  Amounts total_;
  std::map<uint32_t, Amounts> by_site_;
};

}  // namespace proflaunch::tools::stats
