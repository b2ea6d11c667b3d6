#include "tools/proftrace/stacks/stack_dump.h"

#include <cstring>

#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stacks/stack_formatter.h"

namespace proflaunch::tools {

using namespace format;

namespace {

std::string string_of(const SectionModel* section, uint32_t id) {
  if (section == nullptr || id == 0) return "";
  return std::string(section->string(id));
}

void field(std::string& line, const char* name, const std::string& value) {
  line += ' ';
  line += name;
  line += '=';
  line += value;
}

}  // namespace

bool has_stack_tail(uint16_t kind) {
  switch (static_cast<RecordKind>(kind)) {
    case RecordKind::kNativeStackDef:
    case RecordKind::kPythonStackDef:
    case RecordKind::kModuleDef:
      return true;
    default:
      return false;
  }
}

void append_stack_record_fields(std::string& line, const RecordView& record, const SectionModel* section) {
  switch (record.record_kind()) {
    case RecordKind::kCallStack: {
      const auto r = record.as<CallStackRecord>();
      field(line, "point", std::to_string(r.point));
      field(line, "correlation_id", std::to_string(r.correlation_id));
      field(line, "native_stack", std::to_string(r.native_stack));
      field(line, "python_stack", std::to_string(r.python_stack));
      break;
    }
    case RecordKind::kNativeStackDef: {
      const auto r = record.as<NativeStackDefRecord>();
      field(line, "id", std::to_string(r.id));
      field(line, "frames", std::to_string(r.frame_count));
      field(line, "flags", hex(r.flags));
      std::string addresses;
      for (uint16_t i = 0; i < r.frame_count && sizeof r + (i + 1u) * 8u <= record.bytes; ++i) {
        uint64_t address;
        std::memcpy(&address, record.data + sizeof r + i * 8u, sizeof address);
        addresses += (i ? "," : "") + hex(address);
      }
      field(line, "addresses", "[" + addresses + "]");
      break;
    }
    case RecordKind::kPythonStackDef: {
      const auto r = record.as<PythonStackDefRecord>();
      field(line, "id", std::to_string(r.id));
      field(line, "frames", std::to_string(r.frame_count));
      field(line, "flags", hex(r.flags));
      std::string frames;
      for (uint16_t i = 0; i < r.frame_count && sizeof r + (i + 1u) * sizeof(PythonFrame) <= record.bytes; ++i) {
        PythonFrame frame;
        std::memcpy(&frame, record.data + sizeof r + i * sizeof(PythonFrame), sizeof frame);
        std::string text = section != nullptr ? python_frame_text(*section, frame)
                                              : std::to_string(frame.file_string) + ":" + std::to_string(frame.line);
        if (frame.flags & kPythonFrameEntry) text += " [entry]";
        frames += (i ? "," : "") + json_quoted(text);
      }
      field(line, "python_frames", "[" + frames + "]");
      break;
    }
    case RecordKind::kModuleDef: {
      const auto r = record.as<ModuleDefRecord>();
      field(line, "path", json_quoted(string_of(section, r.path_string)));
      field(line, "load_bias", hex(r.load_bias));
      field(line, "start", hex(r.start));
      field(line, "end", hex(r.end));
      field(line, "flags", hex(r.flags));
      std::string build_id;
      for (uint8_t i = 0; i < r.build_id_bytes && sizeof r + i < record.bytes; ++i) {
        const char digits[] = "0123456789abcdef";
        const uint8_t byte = record.data[sizeof r + i];
        build_id += digits[byte >> 4];
        build_id += digits[byte & 15];
      }
      field(line, "build_id", build_id);
      break;
    }
    case RecordKind::kSymbolDef: {
      const auto r = record.as<SymbolDefRecord>();
      field(line, "address", hex(r.address));
      field(line, "inline_depth", std::to_string(r.inline_depth));
      field(line, "function", json_quoted(string_of(section, r.function_string)));
      field(line, "file", json_quoted(string_of(section, r.file_string)));
      field(line, "line", std::to_string(r.line));
      field(line, "flags", hex(r.flags));
      break;
    }
    default:
      break;
  }
}

}  // namespace proflaunch::tools
