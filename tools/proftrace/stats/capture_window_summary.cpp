// `stats` capture-windows: the windows the trace covers (one row each), so
// that every table below it is read as "during these windows".
#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stats/stats_section.h"

namespace proflaunch::tools::stats {
namespace {

class CaptureWindowSummary final : public StatsSection {
 public:
  std::string name() const override { return "capture-windows"; }

  void on_pass_end(const std::vector<CaptureWindow>& windows) override { windows_ = windows; }

  Table finish(const TraceModel& model) override {
    Table table;
    table.title = "Capture windows: the parts of the run recorded (the tables below cover only these)";
    table.columns = {"Window", "Pid", "Start (ns)", "Duration (ns)", "Opened by", "Closed by", "Steps", "Name"};
    const std::vector<CaptureWindow>& windows = windows_;
    uint64_t origin = 0;
    for (const CaptureWindow& w : windows) {
      const SectionModel* section = model.find(w.section_id);
      if (section != nullptr && section->process && (origin == 0 || section->process->monotonic_ns < origin))
        origin = section->process->monotonic_ns;
    }
    for (const CaptureWindow& w : windows) {
      table.rows.push_back({std::to_string(w.index), std::to_string(w.pid),
                            format_ns(w.begin_ns >= origin ? w.begin_ns - origin : 0), format_ns(w.end_ns - w.begin_ns),
                            capture_trigger_name(w.opened_by),
                            w.ended ? capture_trigger_name(w.closed_by) : "(open at the end)",
                            w.steps ? std::to_string(w.first_step) + "-" + std::to_string(w.last_step) : "-",
                            w.name.empty() ? "-" : w.name});
    }
    if (!windows.empty())
      table.notes.push_back("Start: from the first process's start. Nothing outside these windows was recorded; "
                            "memory blocks and communicators alive when a window opened are carried into it");
    return table;
  }

 private:
  std::vector<CaptureWindow> windows_;
};

}  // namespace

std::unique_ptr<StatsSection> make_capture_window_summary() { return std::make_unique<CaptureWindowSummary>(); }

}  // namespace proflaunch::tools::stats
