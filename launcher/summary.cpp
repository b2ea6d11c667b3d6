#include "launcher/summary.h"

#include <cstdio>
#include <set>
#include <unordered_map>

#include "formats/reader.h"
#include "formats/record_kinds.h"

namespace proflaunch::launcher {
namespace {

using namespace format;

class CountingVisitor : public RecordVisitor {
 public:
  void on_record(const RecordView& record) override {
    switch (record.record_kind()) {
      case RecordKind::kProcessInfo:
        // The launcher's device sampler is not a process of the program.
        if ((record.as<ProcessInfoRecord>().flags & kProcessDeviceSampler) != 0) {
          sampler_sections.insert(record.section_id);
          break;
        }
        pids.insert(record.as<ProcessInfoRecord>().pid);
        sections.insert(record.section_id);
        break;
      case RecordKind::kDeviceInfo:
        if (sampler_sections.count(record.section_id) == 0) {
          if (record.as<DeviceInfoRecord>().vendor == uint8_t(Vendor::kNvidia)) ++nvidia_devices;
          if (record.as<DeviceInfoRecord>().vendor == uint8_t(Vendor::kAmd)) ++amd_devices;
        }
        break;
      case RecordKind::kSectionEnd:
        ended.insert(record.section_id);
        break;
      case RecordKind::kLost:
        dropped += record.as<LostRecord>().count;
        break;
      case RecordKind::kThreadBatch:
      case RecordKind::kCallStack:  // belongs to the event before it
        break;
      default:
        if (!is_definition_kind(record.kind) && sampler_sections.count(record.section_id) == 0) ++events;
    }
  }

  std::set<uint32_t> pids;
  std::set<uint64_t> sections;
  std::set<uint64_t> ended;
  std::set<uint64_t> sampler_sections;
  uint64_t nvidia_devices = 0;
  uint64_t amd_devices = 0;
  uint64_t events = 0;
  uint64_t dropped = 0;
};

}  // namespace

bool count_trace(const std::string& path, TraceCounts* counts, std::string* error) {
  auto reader = TraceReader::open_file(path, error);
  if (!reader) return false;
  CountingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  counts->processes = visitor.pids.size();
  counts->sections = visitor.sections.size();
  counts->events = visitor.events;
  counts->dropped = visitor.dropped;
  counts->nvidia_devices = visitor.nvidia_devices;
  counts->amd_devices = visitor.amd_devices;
  counts->unfinished_sections = 0;
  for (uint64_t section : visitor.sections)
    if (visitor.ended.count(section) == 0) ++counts->unfinished_sections;
  counts->file_bytes = reader->file_bytes();
  counts->damaged = !report.clean();
  return true;
}

std::string human_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  if (unit == 0)
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

std::string summary_line(const std::string& path, const TraceCounts& counts) {
  std::string line = "proflaunch: " + path + ": ";
  line += std::to_string(counts.processes) + (counts.processes == 1 ? " process" : " processes");
  if (counts.sections != counts.processes)
    line += " (" + std::to_string(counts.sections) + " images)";
  line += ", " + std::to_string(counts.events) + " events, " + std::to_string(counts.dropped) +
          " dropped, " + human_bytes(counts.file_bytes);
  if (counts.unfinished_sections > 0)
    line += "; " + std::to_string(counts.unfinished_sections) + " ended abruptly";
  if (counts.damaged) line += "; damaged chunks were skipped";
  return line;
}

}  // namespace proflaunch::launcher
