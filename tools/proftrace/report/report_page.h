// `proftrace report`: one self-contained HTML page that answers "where did
// the time go" with the analyses `stats` prints (overview, recommendations,
// kernels, memory operations, code, distributed) and the memory page's
// timelines. The page's template, style and scripts (page/) are embedded at
// build time; the data goes in as JSON. Nothing is fetched when the page is
// opened.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tools/proftrace/stats/table_output.h"

namespace proflaunch::tools::report {

struct ReportData {
  std::string title;                       // the inputs, comma-separated
  std::vector<std::string> inputs;
  std::vector<stats::NamedTable> tables;   // as `stats --json` writes them
  std::string memory_json;                 // `memory --json`'s document ("" when there is none)
  std::string cpu_json;                    // the CPU tab's data (stats/cpu_page_data.h; "" when none)
  std::vector<std::string> notes;          // what the page should say about its inputs (recovered files...)
};

// The page's data: {"title", "version", "inputs", "notes", "stats": {"tables":
// [...]}, "memory": {...} or null, and "cpu": {...} when the trace has CPU
// samples or blocking calls}. The page carries the memory document in
// an element of its own (the memory page's script reads it there), so its
// copy of this one has "memory": null.
std::string report_json(const ReportData& data, bool with_memory = true);

// The page. False when writing failed.
bool write_report_page(const ReportData& data, std::FILE* out);

}  // namespace proflaunch::tools::report
