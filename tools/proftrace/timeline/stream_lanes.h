// Slices on one Perfetto track must nest, and GPU work on one stream is
// sequential on real hardware - but timer granularity produces overlaps of a
// few ns, and broken timing can produce anything. A stream's work is
// therefore placed on lanes (tracks): lane 0 is the stream's track; a slice
// that would overlap everything there goes to an extra lane, so the output
// is always valid and nothing is hidden.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace proflaunch::tools::timeline {

struct LanePlacement {
  size_t lane;          // == lanes.size(): a new lane is needed
  int64_t start_ns;
  int64_t end_ns;
  int64_t adjusted_ns;  // how far the start was moved, 0 if not
};

class StreamLanes {
 public:
  // Overlaps up to this long with the previous slice on lane 0 are taken as
  // timer granularity: the start moves instead of opening a lane.
  static constexpr int64_t kMaxAdjustNs = 1000;
  static constexpr size_t kMaxLanes = 8;

  // `start_is_bound`: the start is only the earliest the work can have
  // begun (a collective's kernel, timed from the rank's arrival on the
  // stream: library_frame.h), so on lane 0 it begins when the work before it
  // ends, however much later.
  LanePlacement place(int64_t start_ns, int64_t end_ns, bool start_is_bound = false) const;
  // Records the placement; `tid` names the lane when it is new.
  void commit(const LanePlacement& placement, uint32_t tid);

  uint32_t tid(size_t lane) const { return lanes_[lane].tid; }
  size_t count() const { return lanes_.size(); }

 private:
  struct Lane {
    uint32_t tid;
    int64_t last_end_ns;
  };
  std::vector<Lane> lanes_;
};

}  // namespace proflaunch::tools::timeline
