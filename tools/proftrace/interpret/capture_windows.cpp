#include "tools/proftrace/interpret/capture_windows.h"

#include <algorithm>
#include <cstdio>

#include "tools/proftrace/record_text.h"

namespace proflaunch::tools {

using namespace format;

std::string CaptureWindow::label() const {
  std::string text = "window " + std::to_string(index) + ": ";
  if (steps) {
    text += first_step == last_step ? "step " + std::to_string(first_step)
                                    : "steps " + std::to_string(first_step) + "-" + std::to_string(last_step);
    if (!name.empty()) text += " of " + name;
    return text;
  }
  text += capture_trigger_name(opened_by);
  if (!name.empty()) text += " " + name;
  text += " to " + (ended ? capture_trigger_name(closed_by) : std::string("end of the process"));
  return text;
}

void CaptureWindowCollector::on_record(const SectionModel& section, const RecordView& record) {
  if (record.record_kind() != RecordKind::kCaptureWindow) return;
  const auto r = record.as<CaptureWindowRecord>();
  CaptureWindow& w = windows_[{section.section_id, r.index}];
  w.section_id = section.section_id;
  w.pid = section.pid();
  w.index = r.index;
  const bool step = r.trigger == static_cast<uint8_t>(CaptureTrigger::kStep);
  if (r.action == static_cast<uint8_t>(CaptureWindowAction::kBegin)) {
    w.begin_ns = r.at_ns;
    w.opened_by = r.trigger;
    if (r.name_string != 0) w.name = std::string(section.string(r.name_string));
    if (step) {
      w.steps = true;
      w.first_step = w.last_step = r.step;
    }
  } else {
    w.end_ns = r.at_ns;
    w.ended = true;
    w.closed_by = r.trigger;
    if (step) w.last_step = r.step;
  }
  uint64_t& last = last_ns_[section.section_id];
  last = std::max(last, r.at_ns);
}

std::vector<CaptureWindow> CaptureWindowCollector::finish(const TraceModel& model) const {
  std::vector<CaptureWindow> out;
  for (const auto& [key, window] : windows_) {
    CaptureWindow w = window;
    if (!w.ended) {
      const SectionModel* section = model.find(w.section_id);
      uint64_t end = section != nullptr && section->end ? section->end->end_ns : 0;
      if (end == 0) end = last_ns_.at(w.section_id);
      w.end_ns = std::max(end, w.begin_ns);
    }
    // A window whose begin was not read (a damaged file): from its end only.
    if (w.begin_ns == 0) w.begin_ns = w.end_ns;
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end(), [](const CaptureWindow& a, const CaptureWindow& b) {
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.section_id < b.section_id;
  });
  return out;
}

std::string describe_windows(const std::vector<CaptureWindow>& windows) {
  if (windows.empty()) return "";
  std::string text = std::to_string(windows.size()) + (windows.size() == 1 ? " capture window: " : " capture windows: ");
  for (size_t i = 0; i < windows.size() && i < 8; ++i) {
    char span[64];
    std::snprintf(span, sizeof span, " (%.3f ms)", double(windows[i].end_ns - windows[i].begin_ns) / 1e6);
    text += (i == 0 ? "" : "; ") + windows[i].label() + span;
  }
  if (windows.size() > 8) text += "; ...";
  return text;
}

}  // namespace proflaunch::tools
