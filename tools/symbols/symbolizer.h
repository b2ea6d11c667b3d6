// Symbolizes native frames from the module files on this machine, one
// ModuleSymbolizer per (path, build id), opened on first use and kept. A
// module that cannot be used (missing, changed since the run, not ELF) is
// remembered with its reason and never retried.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tools/symbols/module_symbolizer.h"
#include "tools/symbols/stack_definitions.h"

namespace proflaunch::symbols {

class Symbolizer {
 public:
  // Frames for a return address inside `module` whose file is `path`; empty
  // when the file cannot tell (the caller falls back to module+offset).
  const SymbolFrames& symbolize(const std::string& path, const ModuleInfo& module, uint64_t address);

  // Files that could not be used, with the reason (for one warning each).
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  ModuleSymbolizer* open(const std::string& path, const std::vector<uint8_t>& build_id);

  std::map<std::pair<std::string, std::vector<uint8_t>>, std::unique_ptr<ModuleSymbolizer>> modules_;
  std::vector<std::string> problems_;
  SymbolFrames nothing_;
};

// "libfoo.so+0x1a2b": the file's base name and the offset in its own
// address space, what a frame shows when nothing better is known.
std::string module_offset_text(const std::string& path, const ModuleInfo& module, uint64_t address);

}  // namespace proflaunch::symbols
