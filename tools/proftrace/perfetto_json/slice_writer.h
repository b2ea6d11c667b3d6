// Writes the trace events for each kind of record: host API calls as X
// slices on their thread, GPU work as X slices on its stream's track, flows
// between the two, LOST as process-scoped instants.
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "tools/proftrace/perfetto_json/correlation_join.h"
#include "tools/proftrace/perfetto_json/event_stream.h"
#include "tools/proftrace/perfetto_json/track_layout.h"

namespace proflaunch::tools::perfetto_json {

struct SliceStats {
  uint64_t api_slices = 0;
  uint64_t gpu_slices = 0;
  uint64_t flows = 0;
  uint64_t lost_markers = 0;
  uint64_t lost_records = 0;  // sum of LOST counts
  uint64_t negative_durations = 0;  // end before begin: written with dur 0
  uint64_t gpu_overlaps_adjusted = 0;  // start moved to the previous slice's end on one stream
};

class SliceWriter {
 public:
  SliceWriter(EventStream& out, TrackLayout& layout) : out_(out), layout_(layout) {}

  void api_call(SectionContext& section, uint32_t tid, const format::ApiCallRecord& record);
  void synchronize(SectionContext& section, uint32_t tid, const format::SynchronizeRecord& record);
  void lifecycle(SectionContext& section, uint32_t tid, const format::ObjectLifecycleRecord& record);
  void lost(SectionContext& section, uint32_t tid, const format::LostRecord& record);
  // The host side of a launch, copy or memset; flow_id 0: no GPU work joined.
  void operation(const HostOperation& operation, uint64_t flow_id);
  // GPU work; `operation` is null when its launch is not in the trace.
  void gpu_work(const HostOperation* operation, const DeviceActivity& activity, uint64_t flow_id);

  const SliceStats& stats() const { return stats_; }

 private:
  // Writes `{"ph":"X",...,"args":{` for a host API span; the caller adds
  // args after the common ones and closes with "}}".
  JsonWriter& begin_api_slice(SectionContext& section, uint32_t tid, const format::ApiSpan& span,
                              uint64_t flow_id);
  void write_duration(JsonWriter& w, int64_t begin, int64_t end);

  EventStream& out_;
  TrackLayout& layout_;
  SliceStats stats_;
};

}  // namespace proflaunch::tools::perfetto_json
