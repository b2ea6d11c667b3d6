#include "launcher/symbol_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <unordered_map>

#include "formats/chunk_encoder.h"
#include "formats/reader.h"
#include "formats/records.h"
#include "tools/symbols/stack_definitions.h"
#include "tools/symbols/symbolizer.h"

namespace proflaunch::launcher {
namespace {

using namespace format;

// Chunks of about the shim's size; a reader accepts up to 64 MiB.
constexpr size_t kChunkContentBytes = size_t{1} << 20;

struct SectionDefinitions {
  symbols::SectionStacks stacks;
  std::vector<uint64_t> function_handles;  // FunctionDef handles, in file order
  std::unordered_map<uint32_t, std::string> strings;
  uint32_t max_string_id = 0;
};

class DefinitionsVisitor : public RecordVisitor {
 public:
  void on_record(const RecordView& record) override {
    SectionDefinitions& section = sections[record.section_id];
    if (record.record_kind() == RecordKind::kStringDef) {
      const auto def = record.as<StringDefRecord>();
      section.strings[def.id] = std::string(record.tail<StringDefRecord>());
      if (def.id > section.max_string_id) section.max_string_id = def.id;
      return;
    }
    if (record.record_kind() == RecordKind::kFunctionDef) {
      section.function_handles.push_back(record.as<FunctionDefRecord>().handle);
      return;
    }
    section.stacks.add(record);
  }
  std::map<uint64_t, SectionDefinitions> sections;
};

// The records of one section's table: new strings first, then the symbols.
class TableBuilder {
 public:
  explicit TableBuilder(SectionDefinitions& section) : section_(section) {
    for (const auto& [id, text] : section.strings) ids_.emplace(text, id);
  }

  uint32_t string(const std::string& text) {
    if (text.empty()) return 0;
    auto found = ids_.find(text);
    if (found != ids_.end()) return found->second;
    const std::string stored = text.size() > kMaxStringBytes ? text.substr(0, kMaxStringBytes) : text;
    const uint32_t id = ++section_.max_string_id;
    StringDefRecord record{};
    record.header.kind = static_cast<uint16_t>(RecordKind::kStringDef);
    record.header.bytes = static_cast<uint16_t>(sizeof record + stored.size());
    record.id = id;
    append(&record, sizeof record);
    append(stored.data(), stored.size());
    ids_.emplace(text, id);
    return id;
  }

  void symbol(uint64_t address, const symbols::SymbolFrames& frames) {
    for (size_t depth = 0; depth < frames.size(); ++depth) {
      const symbols::SymbolFrame& frame = frames[depth];
      SymbolDefRecord record{};
      record.header = header_for<SymbolDefRecord>();
      record.function_string = string(frame.function);
      record.address = address;
      record.file_string = string(frame.file);
      record.line = frame.line;
      record.inline_depth = static_cast<uint16_t>(depth);
      record.flags = static_cast<uint16_t>((frame.from_debug_info ? kSymbolFromDebugInfo : 0) |
                                           (depth + 1 < frames.size() ? kSymbolInlined : 0));
      symbols_.insert(symbols_.end(), reinterpret_cast<const uint8_t*>(&record),
                      reinterpret_cast<const uint8_t*>(&record) + sizeof record);
    }
  }

  // Strings and symbols, each string before the first symbol naming it.
  std::vector<uint8_t> content() const {
    std::vector<uint8_t> all = strings_;
    all.insert(all.end(), symbols_.begin(), symbols_.end());
    return all;
  }

 private:
  void append(const void* data, size_t bytes) {
    const auto* p = static_cast<const uint8_t*>(data);
    strings_.insert(strings_.end(), p, p + bytes);
  }

  SectionDefinitions& section_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<uint8_t> strings_;
  std::vector<uint8_t> symbols_;
};

// Whole records of `content` from `offset`, at most about `limit` bytes.
size_t whole_records(const std::vector<uint8_t>& content, size_t offset, size_t limit) {
  size_t end = offset;
  while (end < content.size()) {
    RecordHeader header;
    std::memcpy(&header, content.data() + end, sizeof header);
    if (end > offset && end + header.bytes - offset > limit) break;
    end += header.bytes;
  }
  return end - offset;
}

bool write_all(int fd, const uint8_t* data, size_t bytes) {
  while (bytes > 0) {
    const ssize_t n = ::write(fd, data, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

SymbolTableResult append_symbol_table(const std::string& trace_path) {
  SymbolTableResult result;
  std::string error;
  auto reader = TraceReader::open_file(trace_path, &error);
  if (!reader) {
    result.error = error;
    return result;
  }
  DefinitionsVisitor visitor;
  reader->read(visitor, ChunkSelection::kDefinitionsOnly);

  symbols::Symbolizer symbolizer;
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> tables;  // section, content
  for (auto& entry : visitor.sections) {
    // Named, not a structured binding: the lambda below captures it (clang
    // before 16 cannot capture a binding; the fuzz build uses clang).
    const uint64_t section_id = entry.first;
    auto& section = entry.second;
    // A trace that already has its table (joined again, or written by an
    // earlier run of this step) keeps it.
    if (section.stacks.has_embedded_symbols()) continue;
    TableBuilder builder(section);
    std::unordered_map<uint64_t, bool> seen;
    auto add = [&](uint64_t address, int32_t module_index) {
      if (module_index < 0 || !seen.emplace(address, true).second) return;
      const symbols::ModuleInfo& module = section.stacks.modules()[static_cast<size_t>(module_index)];
      auto path = section.strings.find(module.path_string);
      if (path == section.strings.end()) return;
      const symbols::SymbolFrames& frames = symbolizer.symbolize(path->second, module, address);
      ++result.addresses;
      if (frames.empty()) return;
      if (!frames.back().function.empty()) ++result.named;
      builder.symbol(address, frames);
    };
    for (const auto& [id, stack] : section.stacks.native_stacks())
      for (const symbols::NativeFrameRef& frame : stack.frames) add(frame.address, frame.module);
    // A host function's FunctionDef names an address in the program; a
    // kernel's names a driver handle, which no module holds (HIP's host
    // stubs are in modules: their symbols are harmless, nothing asks).
    for (uint64_t handle : section.function_handles)
      add(handle + 1, section.stacks.module_ever_at(handle));
    std::vector<uint8_t> content = builder.content();
    if (!content.empty()) tables.emplace_back(section_id, std::move(content));
  }
  result.problems = symbolizer.problems();
  reader.reset();
  if (tables.empty()) {
    result.ok = true;
    return result;
  }

  const int fd = ::open(trace_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    result.error = "cannot append the symbol table to " + trace_path + ": " + std::strerror(errno);
    return result;
  }
  const off_t original_bytes = lseek(fd, 0, SEEK_END);
  ChunkEncoder encoder;
  std::vector<uint8_t> chunk;
  bool written = encoder.ok();
  for (const auto& [section_id, content] : tables) {
    for (size_t offset = 0; written && offset < content.size();) {
      const size_t piece = whole_records(content, offset, kChunkContentBytes);
      chunk.resize(max_encoded_chunk_bytes(piece));
      const size_t bytes = encoder.encode(ChunkKind::kDefinitions, section_id, content.data() + offset,
                                          piece, chunk.data(), chunk.size());
      written = bytes != 0 && write_all(fd, chunk.data(), bytes);
      offset += piece;
    }
    if (!written) break;
    ++result.sections;
  }
  if (!written) {
    // Leave the trace exactly as it was rather than with a cut chunk.
    const int saved = errno;
    if (original_bytes >= 0 && ftruncate(fd, original_bytes) != 0) {
      // Nothing more to do: a reader recovers from a cut tail.
    }
    close(fd);
    result.error = "cannot append the symbol table to " + trace_path + ": " +
                   std::strerror(saved != 0 ? saved : EIO);
    result.sections = 0;
    return result;
  }
  if (close(fd) != 0) {
    result.error = "cannot append the symbol table to " + trace_path + ": " + std::strerror(errno);
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace proflaunch::launcher
