#include "tests/unit/preload/support/trace_contents.h"

#include <algorithm>

namespace proflaunch::testing {
namespace {

using namespace format;

class SectionCollector : public RecordVisitor {
 public:
  explicit SectionCollector(TraceContents& trace) : trace_(trace) {}

  void on_chunk(const ChunkInfo& chunk) override {
    SectionContents& section = section_for(chunk.section_id);
    first_record_of_chunk_ = false;
    if (chunk.kind == static_cast<uint16_t>(ChunkKind::kEvents)) ++section.events_chunks;
    if (chunk.kind == static_cast<uint16_t>(ChunkKind::kDefinitions)) {
      first_record_of_chunk_ = section.definitions_chunks == 0;
      ++section.definitions_chunks;
    }
  }

  void on_record(const RecordView& record) override {
    SectionContents& section = section_for(record.section_id);
    const bool first = first_record_of_chunk_;
    first_record_of_chunk_ = false;
    switch (record.record_kind()) {
      case RecordKind::kProcessInfo:
        section.process = record.as<ProcessInfoRecord>();
        section.process_info_first = first;
        break;
      case RecordKind::kStringDef:
        section.strings[record.as<StringDefRecord>().id] = std::string(record.tail<StringDefRecord>());
        break;
      case RecordKind::kApiDef: {
        const auto api = record.as<ApiDefRecord>();
        section.apis[api.api] = api;
        break;
      }
      case RecordKind::kThreadInfo:
        section.threads.push_back(record.as<ThreadInfoRecord>());
        break;
      case RecordKind::kSectionEnd:
        section.end = record.as<SectionEndRecord>();
        break;
      case RecordKind::kApiCall:
        if (record.tid == 0) ++section.events_before_thread_batch;
        section.calls.push_back(ProbeCall{record.tid, section.events_seen++, record.as<ApiCallRecord>()});
        break;
      case RecordKind::kLost:
        if (record.tid == 0) ++section.events_before_thread_batch;
        section.lost.push_back(ThreadLost{record.tid, section.events_seen++, record.as<LostRecord>()});
        break;
      default:
        break;
    }
  }

 private:
  SectionContents& section_for(uint64_t id) {
    SectionContents& section = trace_.sections[id];
    section.id = id;
    return section;
  }

  TraceContents& trace_;
  bool first_record_of_chunk_ = false;
};

}  // namespace

std::string SectionContents::string(uint32_t id) const {
  auto found = strings.find(id);
  return found == strings.end() ? std::string() : found->second;
}

uint64_t SectionContents::lost_count() const {
  uint64_t count = 0;
  for (const auto& entry : lost) count += entry.record.count;
  return count;
}

std::vector<std::string> SectionContents::thread_names(uint32_t tid) const {
  std::vector<format::ThreadInfoRecord> matching;
  for (const auto& info : threads)
    if (info.tid == tid) matching.push_back(info);
  std::stable_sort(matching.begin(), matching.end(),
                   [](const auto& a, const auto& b) { return a.since_ns < b.since_ns; });
  std::vector<std::string> names;
  for (const auto& info : matching) names.push_back(string(info.name_string));
  return names;
}

std::string SectionContents::thread_name(uint32_t tid) const {
  const auto names = thread_names(tid);
  return names.empty() ? std::string() : names.back();
}

bool TraceContents::all_clean() const {
  return std::all_of(reports.begin(), reports.end(), [](const auto& r) { return r.clean(); });
}

std::string TraceContents::problems() const {
  std::string text;
  for (const auto& report : reports) text += summarize(report) + "\n";
  return text;
}

std::vector<const SectionContents*> TraceContents::sections_of(uint32_t pid) const {
  std::vector<const SectionContents*> found;
  for (const auto& [id, section] : sections)
    if (section.process && section.process->pid == pid) found.push_back(&section);
  std::sort(found.begin(), found.end(), [](const auto* a, const auto* b) {
    return a->process->monotonic_ns < b->process->monotonic_ns;
  });
  return found;
}

uint64_t TraceContents::total_calls() const {
  uint64_t count = 0;
  for (const auto& [id, section] : sections) count += section.calls.size();
  return count;
}

uint64_t TraceContents::total_lost() const {
  uint64_t count = 0;
  for (const auto& [id, section] : sections) count += section.lost_count();
  return count;
}

TraceContents load_trace(const std::vector<std::string>& paths, std::string* error) {
  TraceContents trace;
  for (const auto& path : paths) {
    std::string open_error;
    auto reader = TraceReader::open_file(path, &open_error);
    if (!reader) {
      if (error) *error = open_error;
      return trace;
    }
    SectionCollector collector(trace);
    trace.reports.push_back(reader->read(collector));
    ++trace.files;
  }
  return trace;
}

}  // namespace proflaunch::testing
