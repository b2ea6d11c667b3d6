// Slices on one Perfetto track must nest, and GPU work on one stream is
// sequential on real hardware - but timer granularity produces overlaps of a
// few ns, and broken timing can produce anything. A stream's work is
// therefore placed on lanes (tracks): lane 0 is the stream's track; a slice
// that would overlap something on every lane goes to an extra lane, so the
// output is always valid and nothing is hidden.
//
// Work does not arrive in time order: CUPTI's records come in buffers, and
// work timed by events (host functions, NCCL's kernels) when its events are
// resolved, so a stream's later kernels can be placed before an earlier host
// function. A lane therefore remembers the intervals it holds (the latest
// kRememberedSlices of them), not just its last end: placing by the last end
// sent every NCCL kernel and its host function to extra lanes (issue 40,
// item 11).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
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
  // Overlaps up to this long with the slice before it on lane 0 are taken
  // as timer granularity, or the clock mappings of event-timed work (host
  // functions, collectives) and CUPTI-timed work meeting on one stream (up
  // to 3.7 us seen, 3.17 us in CI: docs/limits.md): the start moves instead
  // of opening a lane, and says by how much (start_adjusted_ns); a slice
  // shorter than that overlap moves whole (its end by as much). The slice
  // writer places a host function after the CUPTI work around it
  // (SliceWriter::HeldGpuWork), so that the one moved is the event-timed one.
  static constexpr int64_t kMaxAdjustNs = 4000;
  static constexpr size_t kMaxLanes = 8;
  // Per lane; a slice that starts before the end of a forgotten one does
  // not go on that lane (memory stays flat in the trace's length).
  static constexpr size_t kRememberedSlices = 4096;

  // `start_is_bound`: the start is only the earliest the work can have
  // begun (a collective's kernel, timed from the rank's arrival on the
  // stream: library_frame.h), so on lane 0 it begins when the work there
  // that holds its start ends, however much later.
  LanePlacement place(int64_t start_ns, int64_t end_ns, bool start_is_bound = false) const;
  // Records the placement; `tid` names the lane when it is new.
  void commit(const LanePlacement& placement, uint32_t tid);

  uint32_t tid(size_t lane) const { return lanes_[lane].tid; }
  size_t count() const { return lanes_.size(); }

 private:
  struct Lane {
    uint32_t tid;
    std::map<int64_t, int64_t> busy;  // start -> end of the slices placed here
    int64_t forgotten_end_ns = std::numeric_limits<int64_t>::min();
    int64_t last_end_ns = std::numeric_limits<int64_t>::min();

    bool free(int64_t start_ns, int64_t end_ns) const;
    // The earliest time at or after `start_ns` that no slice here holds.
    int64_t first_free_from(int64_t start_ns) const;
  };
  std::vector<Lane> lanes_;
};

}  // namespace proflaunch::tools::timeline
