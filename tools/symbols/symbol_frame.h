// What a native address means in source terms: one frame per function, the
// innermost (inlined) one first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proflaunch::symbols {

struct SymbolFrame {
  std::string function;  // demangled; empty when unknown
  std::string file;      // source file; empty when unknown
  uint32_t line = 0;     // 0 when unknown
  bool from_debug_info = false;  // file and line come from DWARF
};

// Innermost first: [0] is the function whose code holds the address (maybe
// inlined), the last one the function that was really called. Empty when
// nothing is known about the address.
using SymbolFrames = std::vector<SymbolFrame>;

}  // namespace proflaunch::symbols
