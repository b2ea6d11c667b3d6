// The timeline as Perfetto JSON (Chrome trace-event format), as
// docs/outputs.md describes the importer, with the PyTorch
// profiler's (Kineto's) top-level keys before traceEvents: X slices, i
// instants, b/e async slices, C counters, M metadata for names and sort
// order, flows as bind_id with flow_out/flow_in. Times are microseconds with
// three decimals from integer ns, so no precision is lost; `ts` counts, as
// Kineto's does, from "baseTimeNanoseconds" (Unix time), so files of several
// ranks converted apart line up.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/proftrace/emit/json_stack_args.h"
#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/timeline/timeline_events.h"

namespace proflaunch::tools::emit {

class JsonEmitter : public timeline::TimelineSink {
 public:
  // `stacks` renders the "stack" arg of API slices.
  JsonEmitter(std::FILE* out, StackFormatter& stacks) : writer_(out), stack_args_(stacks) {}

  void begin(const timeline::TimelineInfo& info) override;
  void process(const timeline::ProcessTrack& track) override;
  void thread(const timeline::ThreadTrack& track) override;
  void slice(const timeline::Slice& slice) override;
  void instant(const timeline::Instant& instant) override;
  void async_slice(const timeline::AsyncSlice& slice) override;
  void counter(const timeline::CounterSample& sample) override;
  bool finish(std::string* error) override;

  bool failed() const override { return writer_.failed(); }
  uint64_t events() const override { return events_; }
  uint64_t bytes() const override { return writer_.bytes_written(); }

 private:
  JsonWriter& next_event();
  // Kineto's clock: "baseTimeNanoseconds" (with a trailing comma) and the
  // shift from timeline ns to ns after it.
  void clock(const timeline::TimelineInfo& info);
  void timestamp(int64_t timeline_ns);  // a "ts" value
  void name(timeline::Str text);  // a quoted string, cached per iid
  void track(timeline::TrackRef track);  // ,"pid":..,"tid":..
  void args(const timeline::Args* args, const timeline::StackRef& stack);  // ,"args":{...}
  void metadata_name(const char* what, uint32_t pid, uint32_t tid, std::string_view name);
  void metadata_sort_index(const char* what, uint32_t pid, uint32_t tid, int64_t index);
  // Kineto's top-level "distributedInfo" and "deviceProperties", each with a trailing comma.
  void distributed_info(const timeline::DistributedInfo& info);
  void device_properties(const std::vector<timeline::GpuProperties>& devices);

  JsonWriter writer_;
  StackArgs stack_args_;
  std::vector<std::string> quoted_;  // per iid, "" until first used
  uint64_t events_ = 0;
  // timeline ns + this = ns since baseTimeNanoseconds (0: no wall clock known).
  int64_t origin_shift_ns_ = 0;
};

}  // namespace proflaunch::tools::emit
