// `proftrace stats`: summary tables in the manner of nsys stats. Each table is
// a StatsSection: a consumer of the interpretation pass (interpret/events.h)
// that sees every event once, resolved (streaming, after the definitions
// pass), and then renders one table. Sections register in
// stats_sections.cpp; `--section NAME` picks some, the default is all.
//
// Memory: a section may keep state per distinct thing it summarizes (kernel
// names, APIs, call sites, communicators), never per event.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/proftrace/interpret/events.h"
#include "tools/proftrace/interpret/interpreter.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::stats {

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // printed under the table (what was unmatched, lost...)
  // Optional, one per row: a call stack, root first. CSV and JSON carry it
  // (a last "Stack (root > leaf)" column, a "stack" array); text prints it
  // under its row when show_stacks is set.
  std::vector<std::vector<std::string>> stacks;
  bool show_stacks = false;
};

// What the sections that rank call sites (call-sites, alloc-sites, code)
// are asked for on the command line.
struct StatsOptions {
  size_t top = 20;                 // rows shown
  std::string by = "line";         // code: line, function, file or module
  std::string order = "gpu";       // code: the column rows are sorted by (code_order_keys())
  uint64_t min_gpu_ns = 0;         // code: rows with less GPU time are left out
  bool full_stacks = false;        // code: each row's heaviest stack under it in text
  std::string step_range;          // overview: NAME[@DOMAIN] of the step's NVTX range ("": found by itself)
  size_t timeline_bins = 0;        // overview, gpu-metrics: also over time in this many equal bins (0: not)
  std::string during;              // cpu: "gpu-idle" keeps what fell while the thread's GPU was idle
  size_t step = 0;                 // cpu: only this step (1-based); 0: the whole run
};

class StatsSection : public interpret::Consumer {
 public:
  // The --section name: lower case, no spaces ("gpu-kernels").
  virtual std::string name() const = 0;
  // Consumers this section is built from (a step detector, ...): the pass
  // hands each event to them, in this order, before the section itself.
  virtual std::vector<interpret::Consumer*> parts() { return {}; }
  // After the last event: the table (may be empty: then it is not printed).
  virtual Table finish(const TraceModel& model) = 0;
  // A section with several tables (overview) returns them all here.
  virtual std::vector<Table> finish_tables(const TraceModel& model) {
    std::vector<Table> tables;
    tables.push_back(finish(model));
    return tables;
  }
};

// Every available section, in print order.
std::vector<std::unique_ptr<StatsSection>> make_stats_sections(const StatsOptions& options = {});

// One interpretation pass over the events of every input (events_report set
// on each) for every section (and its parts). Events of sections whose
// definitions were lost are left out.
interpret::InterpretResult feed_sections(std::vector<InputTrace>& inputs, const TraceModel& model,
                                         std::vector<std::unique_ptr<StatsSection>>& sections);

// The values `code` accepts for StatsOptions::by and ::order.
const std::vector<std::string>& code_aggregations();
const std::vector<std::string>& code_order_keys();

// Shared formatting: durations as ns integers, shares as "12.3".
std::string format_ns(uint64_t ns);
std::string format_percent(double fraction);

}  // namespace proflaunch::tools::stats
