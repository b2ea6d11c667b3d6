// proftrace convert: proflaunch traces to Perfetto JSON (Chrome trace-event
// format), as /work/shared/perfetto-format.md describes the importer.
//
// Streams: the definitions pass has already filled the TraceModel; the
// events pass then writes each record as it comes, holding only the bounded
// correlation window (see correlation_join.h). Output order is not time
// order: the importer sorts.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "tools/proftrace/capture_windows.h"
#include "tools/proftrace/perfetto_json/correlation_join.h"
#include "tools/proftrace/perfetto_json/slice_writer.h"
#include "tools/proftrace/trace_model.h"

namespace proflaunch::tools::perfetto_json {

struct ConvertOptions {
  // Operations and GPU activities that may wait for their partner. ~160
  // bytes each with the index: the default bounds the window at about 20 MB.
  size_t join_window = 1 << 17;
  bool show_progress = false;
  bool stacks = true;  // a "stack" arg on API slices that have a CallStack
};

struct ConvertResult {
  uint64_t records_read = 0;
  uint64_t events_written = 0;
  uint64_t output_bytes = 0;
  size_t gpu_processes = 0;
  uint64_t memory_counter_events = 0;  // memory counter values written
  SliceStats slices;
  JoinStats join;
  // Module files that local symbolization of call stacks could not use.
  std::vector<std::string> symbol_problems;
  // The capture windows the trace covers (empty: the whole run was recorded).
  std::vector<CaptureWindow> windows;
};

// Writes the whole JSON document to `out`. Fills each input's events_report.
// Returns false with `error` set when writing fails.
bool convert(std::vector<InputTrace>& inputs, const TraceModel& model, std::FILE* out,
             const ConvertOptions& options, ConvertResult* result, std::string* error);

}  // namespace proflaunch::tools::perfetto_json
