#include "tools/proftrace/timeline/stream_lanes.h"

#include <algorithm>

#include "tools/proftrace/timeline/time_math.h"

namespace proflaunch::tools::timeline {

LanePlacement StreamLanes::place(int64_t start_ns, int64_t end_ns, bool start_is_bound) const {
  if (end_ns < start_ns) end_ns = start_ns;
  if (start_is_bound && !lanes_.empty() && start_ns < lanes_[0].last_end_ns && end_ns > lanes_[0].last_end_ns)
    return LanePlacement{0, lanes_[0].last_end_ns, end_ns, difference_ns(lanes_[0].last_end_ns, start_ns)};
  for (size_t i = 0; i < lanes_.size(); ++i)
    if (start_ns >= lanes_[i].last_end_ns) return LanePlacement{i, start_ns, end_ns, 0};
  if (!lanes_.empty()) {
    const int64_t overlap = difference_ns(lanes_[0].last_end_ns, start_ns);
    if (overlap <= kMaxAdjustNs && end_ns > lanes_[0].last_end_ns)
      return LanePlacement{0, lanes_[0].last_end_ns, end_ns, overlap};
  }
  if (lanes_.size() < kMaxLanes) return LanePlacement{lanes_.size(), start_ns, end_ns, 0};
  // Out of lanes (only broken timing gets here): the lane that frees first,
  // with the slice moved after its last one.
  size_t best = 0;
  for (size_t i = 1; i < lanes_.size(); ++i)
    if (lanes_[i].last_end_ns < lanes_[best].last_end_ns) best = i;
  const int64_t moved_start = lanes_[best].last_end_ns;
  return LanePlacement{best, moved_start, std::max(end_ns, moved_start),
                       difference_ns(moved_start, start_ns)};
}

void StreamLanes::commit(const LanePlacement& placement, uint32_t tid) {
  if (placement.lane == lanes_.size()) lanes_.push_back(Lane{tid, placement.end_ns});
  Lane& lane = lanes_[placement.lane];
  lane.last_end_ns = std::max(lane.last_end_ns, placement.end_ns);
}

}  // namespace proflaunch::tools::timeline
