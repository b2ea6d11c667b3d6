// The symbol table a finished trace carries (formats/README.md, "Call
// stacks"): right after joining, while the program's libraries are still on
// this machine, every native frame address of every section is symbolized
// (tools/symbols, elfutils) and appended as one Definitions chunk per section
// of SymbolDef records and the strings they name. proftrace then prefers
// these names, so a trace converted on another machine keeps them.
// Host functions (cudaLaunchHostFunc's, cudaStreamAddCallback's) are named
// the same way: every FunctionDef whose handle lies in a module is an address
// in it, symbolized as a function entry (stored as entry + 1, the key a
// return address would have: what proftrace's host-function lookup asks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace proflaunch::launcher {

struct SymbolTableResult {
  bool ok = false;
  std::string error;             // one line, when !ok (the trace is left as it was)
  uint64_t sections = 0;         // sections that got a table
  uint64_t addresses = 0;        // distinct addresses looked up
  uint64_t named = 0;            // of them, with at least a function name
  std::vector<std::string> problems;  // module files that could not be used
};

SymbolTableResult append_symbol_table(const std::string& trace_path);

}  // namespace proflaunch::launcher
