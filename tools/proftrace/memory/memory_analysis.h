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
#include <map>
#include <optional>
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

// The call stacks of every allocation the report lists, formatted root
// first (the analysis keeps their ids; formatting is left for the few it
// lists). Counts them in report.stacks_found.
void attach_call_stacks(const TraceModel& model, MemoryReport& report);

// The name of a CUresult as cuda.h spells it ("CUDA_ERROR_OUT_OF_MEMORY"), or
// "CUresult <n>" for codes this tool does not know.
std::string cuda_result_name(int32_t result);

// "device", "stream-ordered (pool)", "VMM mapping", ...
std::string allocation_kind_name(format::AllocationKind kind);

}  // namespace proflaunch::tools::memory
