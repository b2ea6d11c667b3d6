// Capture windows (CaptureWindow records): the spans of time a process
// recorded, when it was run with --capture-range, --steps, --delay or
// --duration. Collected in the events pass; convert draws them on a
// "Capture windows" track and `stats` lists them, so that every output
// says what part of the run it covers.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/reader.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

struct CaptureWindow {
  uint64_t section_id = 0;
  uint32_t pid = 0;
  uint32_t index = 0;
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  bool ended = false;       // an end record was read (else: until the section's end)
  uint8_t opened_by = 0;    // CaptureTrigger
  uint8_t closed_by = 0;
  std::string name;         // the NVTX range or kernel of the trigger
  bool steps = false;
  uint32_t first_step = 0;
  uint32_t last_step = 0;

  // "window 0: profiler API to profiler API", "window 1: steps 3-4 of train_step"
  std::string label() const;
};

class CaptureWindowCollector {
 public:
  void on_record(const SectionModel& section, const format::RecordView& record);
  // The windows by begin time. A window left open ends with its section
  // (its SectionEnd, else `last_event_ns` of that section).
  std::vector<CaptureWindow> finish(const TraceModel& model) const;

 private:
  std::map<std::pair<uint64_t, uint32_t>, CaptureWindow> windows_;  // (section, index)
  std::map<uint64_t, uint64_t> last_ns_;                            // per section: the latest window time seen
};

// One line: "2 capture windows (profiler API): 1.20 s to 1.45 s, 3.10 s to 3.30 s", or "" without windows.
std::string describe_windows(const std::vector<CaptureWindow>& windows);

}  // namespace proflaunch::tools
