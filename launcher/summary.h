// The one line the launcher prints when a run is over:
//   proflaunch: run.trace: 3 processes, 120345 events, 0 dropped, 4.2 MiB
// counted by reading the joined file back with the format's reader, so the
// numbers are what the tools will see.
#pragma once

#include <cstdint>
#include <string>

namespace proflaunch::launcher {

struct TraceCounts {
  uint64_t processes = 0;  // distinct pids
  uint64_t sections = 0;   // process images (exec starts a new one)
  uint64_t events = 0;     // event records, not counting thread batches and LOST
  uint64_t dropped = 0;    // sum of the LOST records' counts
  uint64_t unfinished_sections = 0;  // no SectionEnd: killed or crashed
  uint64_t file_bytes = 0;
  bool damaged = false;    // the reader skipped something
  uint64_t nvidia_devices = 0;  // NVIDIA DeviceInfo records of the program's processes
  uint64_t amd_devices = 0;     // AMD ones
};

// Reads `path`; false (with `error`) when it cannot be opened as a trace.
bool count_trace(const std::string& path, TraceCounts* counts, std::string* error);

std::string summary_line(const std::string& path, const TraceCounts& counts);

// 1536 -> "1.5 KiB"
std::string human_bytes(uint64_t bytes);

}  // namespace proflaunch::launcher
