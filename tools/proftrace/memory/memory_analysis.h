// Builds a MemoryReport from traces in two streaming passes over their
// events. The first finds, per memory space, its span, its peaks (and at
// which event each happened), every failed allocation with the state at that
// moment, what is still live at the end, and the largest allocations ever
// made. The second replays the same events in the same order to take what
// only a known peak allows: the allocations live at the peak, the timeline
// downsampled over the known span, and the steady-state churn.
//
// Memory: live allocations, one time-order horizon of events, and bounded
// lists (MemoryReport::kMax*); never the trace length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tools/proftrace/memory/analysis_passes.h"
#include "tools/proftrace/memory/memory_report.h"
#include "tools/proftrace/memory/time_order.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::memory {

struct AnalysisOptions {
  // A space's timeline keeps every event up to twice this many; beyond, two
  // samples per bucket (the bucket's highest allocated and its last state).
  size_t timeline_buckets = 2000;
  TimeOrderBuffer::Options order;
};

MemoryReport analyze_memory(std::vector<InputTrace>& inputs, const TraceModel& model,
                            const AnalysisOptions& options);

// Call stacks, after the analysis: the calls whose stacks the outputs would
// show (every allocation the report lists) are known only then, so a pass
// over the trace's CallStack records can keep just those.
//
// The (section, correlation id) of every allocation the report lists.
std::map<uint64_t, std::set<uint64_t>> listed_correlations(const MemoryReport& report);

// The call stack recorded for a call, one frame per line, or nullopt.
using StackLookup = std::function<std::optional<std::string>(uint64_t section_id, uint64_t correlation_id)>;

// Sets the stack of every listed allocation that `lookup` knows (the others
// show "-"); counts them in report.stacks_found.
void attach_stacks(MemoryReport& report, const StackLookup& lookup);

// listed_correlations, a pass over the inputs' CallStack records, then
// attach_stacks with them formatted root first (cmd_memory, cmd_report).
void attach_call_stacks(std::vector<InputTrace>& inputs, const TraceModel& model, MemoryReport& report);

// The name of a CUresult as cuda.h spells it ("CUDA_ERROR_OUT_OF_MEMORY"), or
// "CUresult <n>" for codes this tool does not know.
std::string cuda_result_name(int32_t result);

// "device", "stream-ordered (pool)", "VMM mapping", ...
std::string allocation_kind_name(format::AllocationKind kind);

}  // namespace proflaunch::tools::memory
