// Stack definitions for hand-built traces (formats/README.md, "Call stacks"):
// modules, native and Python stacks and the embedded symbol table, written
// into one section's Definitions chunks.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "formats/trace_builder.h"

namespace proflaunch::testing {

class SyntheticStacks {
 public:
  SyntheticStacks(format::TraceBuilder& trace, uint64_t section) : trace_(trace), section_(section) {}

  void module(const std::string& path, uint64_t start, uint64_t end) {
    format::ModuleDefRecord record{};
    record.header = format::header_for<format::ModuleDefRecord>();
    record.path_string = trace_.string(section_, path);
    record.load_bias = start;
    record.start = start;
    record.end = end;
    raw(&record, sizeof record, {});
  }
  void native(uint32_t id, const std::vector<uint64_t>& innermost_first, uint16_t flags = 0) {
    format::NativeStackDefRecord record{};
    record.header = format::header_for<format::NativeStackDefRecord>();
    record.header.bytes = static_cast<uint16_t>(sizeof record + innermost_first.size() * 8);
    record.id = id;
    record.frame_count = static_cast<uint16_t>(innermost_first.size());
    record.flags = flags;
    raw(&record, sizeof record, std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(innermost_first.data()),
                                                     reinterpret_cast<const uint8_t*>(innermost_first.data()) +
                                                         innermost_first.size() * 8));
  }
  // (file, function, line, entry) innermost first.
  void python(uint32_t id, const std::vector<std::tuple<std::string, std::string, int, bool>>& frames) {
    format::PythonStackDefRecord record{};
    record.header = format::header_for<format::PythonStackDefRecord>();
    record.header.bytes = static_cast<uint16_t>(sizeof record + frames.size() * sizeof(format::PythonFrame));
    record.id = id;
    record.frame_count = static_cast<uint16_t>(frames.size());
    std::vector<uint8_t> tail;
    for (const auto& [file, function, line, entry] : frames) {
      format::PythonFrame frame{trace_.string(section_, file), trace_.string(section_, function), line,
                        entry ? uint32_t{format::kPythonFrameEntry} : 0u};
      const auto* p = reinterpret_cast<const uint8_t*>(&frame);
      tail.insert(tail.end(), p, p + sizeof frame);
    }
    raw(&record, sizeof record, tail);
  }
  void symbol(uint64_t address, const std::string& function, const std::string& file = "", uint32_t line = 0,
              uint16_t depth = 0) {
    format::SymbolDefRecord record{};
    record.header = format::header_for<format::SymbolDefRecord>();
    record.function_string = trace_.string(section_, function);
    record.address = address;
    record.file_string = file.empty() ? 0 : trace_.string(section_, file);
    record.line = line;
    record.inline_depth = depth;
    raw(&record, sizeof record, {});
  }

 private:
  void raw(const void* fixed, size_t bytes, const std::vector<uint8_t>& tail) {
    std::vector<uint8_t> all(static_cast<const uint8_t*>(fixed), static_cast<const uint8_t*>(fixed) + bytes);
    all.insert(all.end(), tail.begin(), tail.end());
    trace_.raw_record(section_, format::ChunkKind::kDefinitions, all);
  }
  format::TraceBuilder& trace_;
  uint64_t section_;
};

}  // namespace proflaunch::testing
