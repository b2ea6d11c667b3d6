// The interpretation pass: the one place in proftrace that reads event
// records. It streams every input's events once and hands each consumer
// (events.h) what they mean: calls with the call stacks that follow them
// (call_stack_pairing.h), operations joined with their GPU work
// (gpu_join.h), GPU work with its collective, the capture windows of each
// input. The definitions pass (trace_model.h) has already run.
//
// Memory stays flat however long the trace: one held record per thread, the
// bounded join window, and a bounded table of recent collectives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/gpu_join.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::interpret {

struct InterpretOptions {
  // Operations and GPU work that may wait for their partner. ~160 bytes each
  // with the index: the default bounds the window at about 20 MB.
  size_t join_window = size_t{1} << 17;
  // Called at each chunk: the bytes of all inputs read so far (by file
  // offset) and the records so far, for a progress line.
  std::function<void(uint64_t bytes, uint64_t records)> on_chunk;
  // Leave out the events of sections whose definitions were lost (counted
  // in records_without_definitions): for outputs that name everything.
  bool only_defined_sections = false;
  // Hand each record over as it is read: a call before its stacks are known
  // (they come after it, in on_call_stacks), for outputs that number what
  // they write in file order. Otherwise a call waits for its stacks.
  bool calls_in_file_order = false;
  // Join operations with their GPU work (on_operation and the others). Off
  // for an output that joins them itself (SQL joins them in its views):
  // then only the *_read callbacks come for them.
  bool join_gpu_work = true;
};

struct InterpretResult {
  uint64_t records_read = 0;
  uint64_t records_without_definitions = 0;  // left out (only_defined_sections)
  JoinStats join;
  uint64_t unpaired_stacks = 0;  // CallStacks whose call was not right before them
  // The capture windows of every input, by begin time (empty: the whole run
  // was recorded).
  std::vector<CaptureWindow> windows;
};

class Interpreter {
 public:
  Interpreter(const TraceModel& model, std::vector<Consumer*> consumers, InterpretOptions options = {});
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  // One pass over the events of every input, in order (fills each input's
  // events_report). Stops early when a consumer's keep_going() says so.
  InterpretResult run(std::vector<InputTrace>& inputs);

  // The section of `section_id` (one is made for a section without
  // definitions the first time its events are met).
  const Section& section(uint64_t section_id);

 private:
  class Pass;
  const TraceModel& model_;
  std::vector<Consumer*> consumers_;
  InterpretOptions options_;
  std::vector<std::unique_ptr<Section>> sections_;
  std::unordered_map<uint64_t, const Section*> by_id_;
};

}  // namespace proflaunch::tools::interpret
