// What one section's stack definitions say (formats/README.md, "Call
// stacks"): its modules, its native and Python stacks, and the symbol table
// the launcher appended. Filled from definition records in file order; each
// native frame is tied to the module that held its address when the stack
// was defined, so an address reused by a later library is not confused.
// Strings stay ids: the caller resolves them with the section's strings.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "formats/reader.h"
#include "formats/records.h"

namespace proflaunch::symbols {

struct ModuleInfo {
  uint32_t path_string = 0;
  uint64_t load_bias = 0;
  uint64_t start = 0;
  uint64_t end = 0;
  std::vector<uint8_t> build_id;
};

struct NativeFrameRef {
  uint64_t address = 0;
  int32_t module = -1;  // index into SectionStacks::modules(), -1 when no module held it
};

struct NativeStackInfo {
  std::vector<NativeFrameRef> frames;  // innermost first
  bool truncated = false;
};

struct PythonStackInfo {
  std::vector<format::PythonFrame> frames;  // innermost first
  bool truncated = false;
};

class SectionStacks {
 public:
  // Takes ModuleDef, NativeStackDef, PythonStackDef and SymbolDef records;
  // ignores every other kind. Records of the wrong size are ignored.
  void add(const format::RecordView& record);

  const std::vector<ModuleInfo>& modules() const { return modules_; }
  const NativeStackInfo* native(uint32_t id) const;
  const PythonStackInfo* python(uint32_t id) const;
  const std::unordered_map<uint32_t, NativeStackInfo>& native_stacks() const { return native_; }
  const std::unordered_map<uint32_t, PythonStackInfo>& python_stacks() const { return python_; }

  // The embedded symbol table for `address`, sorted by inline_depth; empty
  // when the table does not name it.
  std::span<const format::SymbolDefRecord> embedded_symbols(uint64_t address) const;
  bool has_embedded_symbols() const { return !symbols_.empty(); }

  bool empty() const { return modules_.empty() && native_.empty() && python_.empty(); }

  // The module that holds `address` among every module the section loaded,
  // unloaded ones too, the latest first; -1 when none did. For addresses
  // read from events (a host function's), which may outlive their module:
  // a callback of a plugin closed since is still named from its file.
  int32_t module_ever_at(uint64_t address) const;

 private:
  int32_t module_at(uint64_t address) const;

  std::vector<ModuleInfo> modules_;
  std::vector<int32_t> loaded_;  // indexes of modules loaded now (in catalog order)
  std::unordered_map<uint32_t, NativeStackInfo> native_;
  std::unordered_map<uint32_t, PythonStackInfo> python_;
  std::unordered_map<uint64_t, std::vector<format::SymbolDefRecord>> symbols_;
};

}  // namespace proflaunch::symbols
