// The outputs of `proftrace memory`, one file each: the terminal report
// (report_text.cpp), the self-contained HTML page (report_html.cpp), JSON
// (report_json.cpp) and CSV tables (report_csv.cpp). All write the same
// MemoryReport.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "tools/proftrace/memory/memory_report.h"

namespace proflaunch::tools::memory {

struct TextOptions {
  size_t top = 10;  // blocks listed per table
};

void write_text_report(const MemoryReport& report, const std::string& title, const TextOptions& options,
                       std::FILE* out);

// The whole report as one JSON document (memory_report.h's fields). False
// when writing failed.
bool write_json_report(const MemoryReport& report, const std::string& title, std::FILE* out);

// Tables in `directory` (created if missing): spaces.csv, timeline.csv,
// live_at_peak.csv, failures.csv, leaks.csv. False with `error` set when a
// file cannot be written.
bool write_csv_report(const MemoryReport& report, const std::string& directory, std::string* error);

// One HTML file with everything inline (no network): per space a zoomable
// timeline stacked by kind, peak and failure markers, hover details and the
// table of allocations live at the peak.
bool write_html_report(const MemoryReport& report, const std::string& title, std::FILE* out);

// write_json_report's document as a string (the report page embeds it).
bool report_as_json(const MemoryReport& report, const std::string& title, std::string* json);

// "GPU 0 (Simulated GPU, 16.0 GiB)", "Pinned host memory".
std::string space_label(const SpaceReport& space);

// "out of memory at 12.3 s on device 0 (...): requested 2.0 GiB with 77.1 GiB
// allocated in 1,204 blocks (...); largest live blocks: ..."
std::string failure_sentence(const FailureReport& failure, uint32_t pid, uint64_t base_ns);

}  // namespace proflaunch::tools::memory
