// Putting processes of several hosts on one timeline.
//
// Every timestamp is its host's CLOCK_MONOTONIC. On one host those agree
// already. Across hosts, each section's ProcessInfo snapshot gives
// REALTIME - MONOTONIC, the host's wall-clock offset: subtracting the
// reference host's turns another host's monotonic times into the
// reference's, as far as the hosts' wall clocks agree (NTP: typically
// 0.1-10 ms). Collectives then refine it: an all-reduce, all-gather,
// reduce-scatter or all-to-all ends at the same moment on every rank (no
// rank can finish before the last one's data arrived), so the median
// disagreement of such ends between a host and the reference is that
// host's remaining clock error.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/reader.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

// One rank's end of a collective that finishes together on every rank.
struct CollectiveEndSample {
  std::string host;
  uint64_t comm_id;
  uint64_t sequence;
  int64_t end_ns;  // the host's CLOCK_MONOTONIC
};

class HostClockOffsets {
 public:
  // The reference is the host of the first section in rank order.
  static HostClockOffsets from_snapshots(const TraceModel& model);

  // Moves each non-reference host's offset by the median of
  // (reference end - this host's aligned end) over the instances both saw.
  void refine_with_collective_ends(const std::vector<CollectiveEndSample>& samples);

  // Add to a host's monotonic time to get the reference host's.
  int64_t offset_ns(const std::string& host) const;
  const std::string& reference_host() const { return reference_; }
  size_t host_count() const { return offsets_.size(); }
  // How many collective instances refined this host's offset (0: wall clock only).
  size_t refinement_samples(const std::string& host) const;

 private:
  std::string reference_;
  std::map<std::string, int64_t> offsets_;
  std::map<std::string, size_t> samples_;
};

// Streams a trace's events and keeps the ends of the collectives that end
// together (outside groups: their own kernel). Bounded: unmatched entries
// leave after `window` newer ones.
class CollectiveEndCollector : public format::RecordVisitor {
 public:
  explicit CollectiveEndCollector(const TraceModel& model, size_t window = size_t{1} << 17)
      : model_(model), window_(window) {}
  void on_record(const format::RecordView& record) override;
  std::vector<CollectiveEndSample>& samples() { return samples_; }

 private:
  struct Key {
    uint64_t section, correlation;
    bool operator<(const Key& o) const { return section != o.section ? section < o.section : correlation < o.correlation; }
  };
  struct Instance {
    uint64_t comm_id, sequence;
  };
  void trim();

  const TraceModel& model_;
  size_t window_;
  std::map<Key, Instance> collectives_;
  std::map<Key, int64_t> ends_;
  std::vector<Key> order_;
  std::vector<CollectiveEndSample> samples_;
};

// True for the collectives that finish together on every rank.
bool ends_together(uint8_t op);

// The offsets of every host of the trace: from the snapshots, refined by
// the collectives' ends when the trace spans several hosts (a first pass
// over the events, which a trace of one host does not need).
HostClockOffsets align_host_clocks(std::vector<InputTrace>& inputs, const TraceModel& model);

}  // namespace proflaunch::tools
