#include "tests/e2e/osrt/osrt_trace.h"

#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "formats/reader.h"

namespace proflaunch::e2e {
namespace {

using namespace format;

struct Section {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  std::map<uint32_t, std::string> strings;
  std::map<uint16_t, ApiDefRecord> apis;
  std::map<uint32_t, std::vector<uint64_t>> native;
  std::map<uint32_t, std::vector<PythonFrame>> python;
  std::map<uint64_t, std::map<uint16_t, uint32_t>> symbols;  // address -> inline depth -> function string
  std::vector<std::pair<BlockingCallRecord, uint32_t>> calls;  // with tid
  std::map<uint64_t, CallStackRecord> stacks;                   // by correlation id
};

class Collector : public RecordVisitor {
 public:
  std::map<uint64_t, Section> sections;
  std::vector<uint64_t> order;

  void on_record(const RecordView& record) override {
    if (sections.find(record.section_id) == sections.end()) order.push_back(record.section_id);
    Section& s = sections[record.section_id];
    switch (record.record_kind()) {
      case RecordKind::kProcessInfo:
        s.pid = record.as<ProcessInfoRecord>().pid;
        s.ppid = record.as<ProcessInfoRecord>().ppid;
        break;
      case RecordKind::kStringDef:
        s.strings[record.as<StringDefRecord>().id] = std::string(record.tail<StringDefRecord>());
        break;
      case RecordKind::kApiDef: {
        const auto api = record.as<ApiDefRecord>();
        s.apis[api.api] = api;
        break;
      }
      case RecordKind::kNativeStackDef: {
        const auto def = record.as<NativeStackDefRecord>();
        std::vector<uint64_t>& frames = s.native[def.id];
        for (uint16_t i = 0; i < def.frame_count && sizeof def + (i + 1u) * 8u <= record.bytes; ++i) {
          uint64_t address;
          std::memcpy(&address, record.data + sizeof def + i * 8u, sizeof address);
          frames.push_back(address);
        }
        break;
      }
      case RecordKind::kPythonStackDef: {
        const auto def = record.as<PythonStackDefRecord>();
        std::vector<PythonFrame>& frames = s.python[def.id];
        for (uint16_t i = 0; i < def.frame_count && sizeof def + (i + 1u) * sizeof(PythonFrame) <= record.bytes;
             ++i) {
          PythonFrame frame;
          std::memcpy(&frame, record.data + sizeof def + i * sizeof(PythonFrame), sizeof frame);
          frames.push_back(frame);
        }
        break;
      }
      case RecordKind::kSymbolDef: {
        const auto symbol = record.as<SymbolDefRecord>();
        s.symbols[symbol.address][symbol.inline_depth] = symbol.function_string;
        break;
      }
      case RecordKind::kBlockingCall: s.calls.emplace_back(record.as<BlockingCallRecord>(), record.tid); break;
      case RecordKind::kCallStack: {
        const auto stack = record.as<CallStackRecord>();
        if (stack.point == static_cast<uint8_t>(StackPoint::kBlocking)) s.stacks[stack.correlation_id] = stack;
        break;
      }
      default: break;
    }
  }
};

std::string string_of(const Section& s, uint32_t id) {
  auto found = s.strings.find(id);
  return found == s.strings.end() ? "" : found->second;
}

}  // namespace

bool BlockingWait::in_native_function(const std::string& name) const {
  for (const std::vector<std::string>& frame : native_frames)
    for (const std::string& function : frame)
      if (function == name) return true;
  return false;
}

bool BlockingWait::in_python_function(const std::string& name) const {
  for (const PythonFrameText& frame : python_frames)
    if (frame.function == name) return true;
  return false;
}

std::string BlockingWait::describe() const {
  std::ostringstream text;
  text << api << " tid=" << tid << " kind=" << static_cast<int>(record.object_kind) << " object=0x" << std::hex
       << record.object << std::dec << " dur_ns=" << duration_ns() << " error=" << record.error << " native=[";
  for (const std::vector<std::string>& frame : native_frames) {
    for (const std::string& f : frame) text << f << (&f == &frame.back() ? "" : "<");
    text << ";";
  }
  text << "] python=[";
  for (const PythonFrameText& f : python_frames) text << f.function << "@" << f.file << ":" << f.line << ";";
  text << "]";
  return text.str();
}

OsrtTrace load_osrt_trace(const std::string& path, std::string* error) {
  OsrtTrace trace;
  auto reader = TraceReader::open_file(path, error);
  if (reader == nullptr) return trace;
  Collector collector;
  reader->read(collector);
  // The traced program: the process whose parent was not traced. Not the
  // first section in the file: a wrapper's children (pyenv's shim is a bash
  // script that runs command substitutions before it execs Python) may come
  // first.
  std::set<uint32_t> pids;
  for (const auto& [id, s] : collector.sections) pids.insert(s.pid);
  for (uint64_t id : collector.order) {
    const Section& s = collector.sections.at(id);
    if (trace.main_pid == 0 && pids.count(s.ppid) == 0) trace.main_pid = s.pid;
  }
  for (uint64_t id : collector.order) {
    const Section& s = collector.sections.at(id);
    if (trace.main_pid == 0) trace.main_pid = s.pid;
    trace.stack_records += s.stacks.size();
    for (const auto& [record, tid] : s.calls) {
      BlockingWait wait;
      wait.pid = s.pid;
      wait.tid = tid;
      wait.record = record;
      // Copies: the record is packed, its fields not aligned for binding.
      const uint16_t api_id = record.span.api;
      const uint64_t correlation = record.span.correlation_id;
      if (auto api = s.apis.find(api_id); api != s.apis.end()) {
        wait.api = string_of(s, api->second.name_string);
        wait.api_domain = api->second.domain;
      }
      if (auto stack = s.stacks.find(correlation); stack != s.stacks.end()) {
        wait.has_stack = true;
        if (auto native = s.native.find(stack->second.native_stack); native != s.native.end())
          for (uint64_t address : native->second) {
            std::vector<std::string> functions;
            if (auto symbol = s.symbols.find(address); symbol != s.symbols.end())
              for (const auto& [depth, function] : symbol->second) functions.push_back(string_of(s, function));
            wait.native_frames.push_back(std::move(functions));
          }
        if (auto python = s.python.find(stack->second.python_stack); python != s.python.end())
          for (const PythonFrame& frame : python->second)
            wait.python_frames.push_back({string_of(s, frame.file_string), string_of(s, frame.function_string), frame.line});
      }
      trace.waits.push_back(std::move(wait));
    }
  }
  return trace;
}

}  // namespace proflaunch::e2e
