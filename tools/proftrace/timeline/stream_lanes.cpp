#include "tools/proftrace/timeline/stream_lanes.h"

#include <algorithm>
#include <iterator>

#include "tools/proftrace/timeline/time_math.h"

namespace proflaunch::tools::timeline {

bool StreamLanes::Lane::free(int64_t start_ns, int64_t end_ns) const {
  if (start_ns < forgotten_end_ns) return false;
  // Slices on a lane do not overlap: only the one that starts last at or
  // before `start_ns` can hold it, and any that starts inside is in the way.
  const auto next = busy.upper_bound(start_ns);
  if (next != busy.end() && next->first < end_ns) return false;
  return next == busy.begin() || std::prev(next)->second <= start_ns;
}

int64_t StreamLanes::Lane::first_free_from(int64_t start_ns) const {
  start_ns = std::max(start_ns, forgotten_end_ns);
  for (;;) {
    const auto next = busy.upper_bound(start_ns);
    if (next == busy.begin() || std::prev(next)->second <= start_ns) return start_ns;
    start_ns = std::prev(next)->second;
  }
}

LanePlacement StreamLanes::place(int64_t start_ns, int64_t end_ns, bool start_is_bound) const {
  if (end_ns < start_ns) end_ns = start_ns;
  if (start_is_bound && !lanes_.empty()) {
    const int64_t moved = lanes_[0].first_free_from(start_ns);
    if ((moved < end_ns || moved == start_ns) && lanes_[0].free(moved, end_ns))
      return LanePlacement{0, moved, end_ns, difference_ns(moved, start_ns)};
  }
  for (size_t i = 0; i < lanes_.size(); ++i)
    if (lanes_[i].free(start_ns, end_ns)) return LanePlacement{i, start_ns, end_ns, 0};
  if (!lanes_.empty()) {
    const int64_t moved = lanes_[0].first_free_from(start_ns);
    const int64_t by = difference_ns(moved, start_ns);
    if (by <= kMaxAdjustNs && moved < end_ns && lanes_[0].free(moved, end_ns))
      return LanePlacement{0, moved, end_ns, by};
    // A short slice that lies wholly inside the overlap (a host function
    // whose event times map a few us early against a CUPTI-timed kernel):
    // it moves whole, keeping its duration.
    if (by <= kMaxAdjustNs && moved >= end_ns && lanes_[0].free(moved, end_ns + by))
      return LanePlacement{0, moved, end_ns + by, by};
  }
  if (lanes_.size() < kMaxLanes) return LanePlacement{lanes_.size(), start_ns, end_ns, 0};
  // Out of lanes (only broken timing gets here): the lane that frees first,
  // with the slice moved after its last one.
  size_t best = 0;
  for (size_t i = 1; i < lanes_.size(); ++i)
    if (lanes_[i].last_end_ns < lanes_[best].last_end_ns) best = i;
  const int64_t moved_start = std::max(lanes_[best].last_end_ns, start_ns);
  return LanePlacement{best, moved_start, std::max(end_ns, moved_start), difference_ns(moved_start, start_ns)};
}

void StreamLanes::commit(const LanePlacement& placement, uint32_t tid) {
  if (placement.lane == lanes_.size()) lanes_.push_back(Lane{tid, {}});
  Lane& lane = lanes_[placement.lane];
  // A zero-length slice may share its start with another.
  const auto [slot, added] = lane.busy.try_emplace(placement.start_ns, placement.end_ns);
  if (!added) slot->second = std::max(slot->second, placement.end_ns);
  lane.last_end_ns = std::max(lane.last_end_ns, placement.end_ns);
  if (lane.busy.size() > kRememberedSlices) {
    lane.forgotten_end_ns = std::max(lane.forgotten_end_ns, lane.busy.begin()->second);
    lane.busy.erase(lane.busy.begin());
  }
}

}  // namespace proflaunch::tools::timeline
