// Symbolizes addresses of one ELF file with elfutils (libdwfl): demangled
// function names, source file and line, inlined frames. Without DWARF the
// ELF symbol table still names functions; without that the caller shows
// module+offset. Never fails on a bad file: open() says why it cannot be used.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include "tools/symbols/symbol_frame.h"

struct Dwfl;
struct Dwfl_Module;

namespace proflaunch::symbols {

class ModuleSymbolizer {
 public:
  // Opens `path`. When `build_id` is not empty the file must have that build
  // id (otherwise it changed since the run and its names would be wrong).
  // nullptr with `why_not` set when the file cannot be used.
  static std::unique_ptr<ModuleSymbolizer> open(const std::string& path,
                                                std::span<const uint8_t> build_id,
                                                std::string* why_not);
  ~ModuleSymbolizer();
  ModuleSymbolizer(const ModuleSymbolizer&) = delete;
  ModuleSymbolizer& operator=(const ModuleSymbolizer&) = delete;

  // Frames for a return address given as an address in the file's own
  // virtual address space (run-time address - load bias). Cached.
  const SymbolFrames& symbolize_return_address(uint64_t file_address);

  bool has_debug_info() const { return has_debug_info_; }

 private:
  ModuleSymbolizer() = default;
  SymbolFrames lookup(uint64_t pc);

  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  bool has_debug_info_ = false;
  std::unordered_map<uint64_t, SymbolFrames> cache_;
};

// "foo(int)" from "_Z3fooi"; the name itself when it is not mangled.
std::string demangle_symbol(const char* name);

}  // namespace proflaunch::symbols
