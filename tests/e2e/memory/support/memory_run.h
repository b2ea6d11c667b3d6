// What the memory end-to-end tests share: running a program under the real
// launcher and shim on the simulated stack, the memory records of the trace
// (read with the formats reader, independent of proftrace), and
// `proftrace memory --json` parsed.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "formats/records.h"
#include "tests/unit/preload/support/process_runner.h"
#include "tests/unit/tools/json_value.h"

namespace proflaunch::e2e {

using testing::JsonValue;
using testing::ProcessResult;
using testing::RunOptions;
using testing::TempDir;

std::string build_path(const char* variable);

// proflaunch -q -o <trace> <launcher_args> -- <program>, with only the
// simulated libraries on the library path.
RunOptions traced(const std::string& trace, const std::vector<std::string>& program,
                  const std::vector<std::string>& launcher_args = {},
                  const std::vector<std::pair<std::string, std::string>>& env = {});

ProcessResult run_proftrace(const std::vector<std::string>& args);

// One MemoryOperation or MemoryInfo record with its names.
struct MemoryCall {
  uint32_t tid = 0;
  std::string api;  // ApiDef name: cudaMalloc, cuMemAlloc, ...
  bool info = false;
  format::MemoryOperationRecord operation{};
  format::MemoryInfoRecord memory_info{};
  const format::ApiSpan& span() const { return info ? memory_info.span : operation.span; }
  bool via_runtime() const { return (span().flags & format::kApiViaRuntime) != 0; }
};

// Every memory record of the trace in file order; fails the test if the
// trace cannot be read.
std::vector<MemoryCall> memory_calls(const std::string& trace);

// `proftrace memory <trace> --json <file>`, parsed; fails the test on error.
JsonValue memory_report(const std::string& trace, const TempDir& dir);

// "key=value" fields of the line of `text` that starts with `prefix`.
std::string field_of_line(const std::string& text, const std::string& prefix, const std::string& key);

}  // namespace proflaunch::e2e
