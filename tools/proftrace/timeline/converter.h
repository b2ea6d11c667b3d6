// proftrace convert: proflaunch traces onto the format-neutral timeline
// (timeline_events.h), which a TimelineSink writes out (Perfetto JSON or
// protobuf: tools/proftrace/emit/).
//
// Streams: the definitions pass has already filled the TraceModel; the
// events pass then puts each record on the timeline as it comes, holding
// only the bounded correlation window (interpret/gpu_join.h). Event order
// is not time order: the Perfetto importer sorts (the protobuf emitter
// orders what the importer cannot).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/interpret/gpu_join.h"
#include "tools/proftrace/timeline/slice_writer.h"
#include "tools/proftrace/timeline/timeline_events.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::timeline {

struct ConvertOptions {
  // Operations and GPU activities that may wait for their partner. ~160
  // bytes each with the index: the default bounds the window at about 20 MB.
  size_t join_window = 1 << 17;
  bool show_progress = false;
  bool stacks = true;  // the call stack of API slices that have a CallStack
  // Hand the events to the sink on a thread of its own (threaded_sink.h):
  // the output is the same, written beside the reading.
  bool writer_thread = true;
  // The NVTX range that is one step, NAME[@DOMAIN] as stats --step-range;
  // "" finds the steps as stats does (stats/step_detection.h).
  std::string step_range;
  // The GPU side of NVTX ranges on the streams of their work (Kineto's
  // convention; SliceWriter::set_annotations_on_streams): the JSON's choice.
  bool annotations_on_streams = false;
};

struct ConvertResult {
  uint64_t records_read = 0;
  uint64_t events_written = 0;  // in the sink's own unit
  uint64_t output_bytes = 0;
  size_t gpu_processes = 0;
  uint64_t memory_counter_events = 0;  // memory counter values written
  SliceStats slices;
  interpret::JoinStats join;
  // The capture windows the trace covers (empty: the whole run was recorded).
  std::vector<CaptureWindow> windows;
  size_t profiler_steps = 0;  // ProfilerStep#N slices written
};

// Puts every input on one timeline and hands it to `sink`, then finishes
// the sink. Fills each input's events_report. Returns false with `error` set
// when writing fails.
bool convert(std::vector<InputTrace>& inputs, const TraceModel& model, TimelineSink& sink,
             const ConvertOptions& options, ConvertResult* result, std::string* error);

}  // namespace proflaunch::tools::timeline
