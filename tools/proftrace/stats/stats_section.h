// `proftrace stats`: summary tables in the manner of nsys stats. Each table is
// a StatsSection that sees every event record once (streaming, after the
// definitions pass) and then renders one table. Sections register in
// stats_sections.cpp; `--section NAME` picks some, the default is all.
//
// Memory: a section may keep state per distinct thing it summarizes (kernel
// names, APIs, call sites, communicators), never per event.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/reader.h"
#include "tools/proftrace/trace_model.h"

namespace proflaunch::tools::stats {

struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // printed under the table (what was unmatched, lost...)
};

class StatsSection {
 public:
  virtual ~StatsSection() = default;
  // The --section name: lower case, no spaces ("gpu-kernels").
  virtual std::string name() const = 0;
  // Every event record of every section, in file order.
  virtual void on_record(const SectionModel& section, const format::RecordView& record) = 0;
  // After the last record: the table (may be empty: then it is not printed).
  virtual Table finish(const TraceModel& model) = 0;
};

// Every available section, in print order.
std::vector<std::unique_ptr<StatsSection>> make_stats_sections();

// Shared formatting: durations as ns integers, shares as "12.3".
std::string format_ns(uint64_t ns);
std::string format_percent(double fraction);

}  // namespace proflaunch::tools::stats
