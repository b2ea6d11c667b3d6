// `proftrace export --sqlite`: the trace as relational tables (schema.cpp;
// tools/README.md, "SQL export"). One streaming pass over the events after
// the definitions pass: each record becomes its rows as it is read, through
// prepared statements inside transactions. What needs pairing is kept only
// while it is open: each thread's last API call until its CallStack may
// follow, NVTX ranges until they close. A call and its GPU work are joined
// in SQL, by (process_id, correlation_id) in both tables (indexed at the
// end), not in memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::sql {

struct ExportCounts {
  uint64_t processes = 0;
  uint64_t threads = 0;
  uint64_t api_calls = 0;
  uint64_t kernels = 0;
  uint64_t copies = 0;
  uint64_t memsets = 0;
  uint64_t memory_operations = 0;
  uint64_t gpu_activities = 0;
  uint64_t graph_nodes = 0;
  uint64_t nvtx_ranges = 0;
  uint64_t collectives = 0;
  uint64_t stacks = 0;
  uint64_t cpu_samples = 0;
  uint64_t blocking_calls = 0;
  uint64_t records_skipped = 0;   // event records of sections without definitions
  uint64_t unpaired_stacks = 0;   // CallStack records whose call was not the thread's last
};

// Writes every table into a new database at `path` (which must not exist)
// from `inputs`, whose definitions are already in `model`; fills each
// input's events_report. Throws (SqliteError, std::exception) on a failure
// to write; the caller removes the file.
ExportCounts export_sqlite(std::vector<InputTrace>& inputs, const TraceModel& model, const std::string& path);

}  // namespace proflaunch::tools::sql
