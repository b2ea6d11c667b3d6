// Every JSON the end-to-end tests convert is converted to protobuf as well,
// and tests/perfetto/pftrace_check.py checks that the protobuf follows the
// importer's rules and carries the same events (issue: "every e2e trace
// converted to both formats carries the same events"). Called by the e2e
// suites' run_proftrace after a successful `convert ... -o X.json` (or
// `-o X.pftrace`, checked alone); a no-op for anything else or when
// PFTRACE_CHECKER is not set. Where TRACE_PROCESSOR names Perfetto's
// trace_processor_shell, the checker loads both files in it too.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::testing {

// "" when the twin is right (or there is none to make), else what is wrong.
inline std::string protobuf_twin_problems(const std::string& proftrace, const std::vector<std::string>& args) {
  const char* checker = std::getenv("PFTRACE_CHECKER");
  const char* python = std::getenv("PYTHON3");
  if (checker == nullptr || python == nullptr || args.empty() || args[0] != "convert") return "";
  std::vector<std::string> twin_args = args;
  std::string output;
  for (size_t i = 1; i + 1 < twin_args.size(); ++i) {
    if (twin_args[i] == "-o" || twin_args[i] == "--output") {
      output = twin_args[i + 1];
      twin_args[i + 1] = output + ".pftrace";
    }
  }
  const auto ends_with = [&output](const std::string& suffix) {
    return output.size() > suffix.size() &&
           output.compare(output.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  // pftrace_check.py on a protobuf (and the JSON it must equal); "" when it passes.
  const auto check = [&](std::vector<std::string> files, const std::string& what) -> std::string {
    RunOptions options;
    options.argv = {python, checker};
    options.argv.insert(options.argv.end(), files.begin(), files.end());
    options.timeout_ms = 120000;
    const ProcessResult checked = run_process(options);
    return checked.exited_with(0) ? "" : what + ":\n" + checked.err;
  };
  // Written as protobuf: no twin to make, but the checker (and Perfetto's
  // importer, where TRACE_PROCESSOR is set) still reads it.
  if (ends_with(".pftrace") || ends_with(".pftrace.gz")) return check({output}, output + " breaks a rule");
  if (!ends_with(".json")) return "";
  RunOptions convert;
  convert.argv = {proftrace};
  convert.argv.insert(convert.argv.end(), twin_args.begin(), twin_args.end());
  convert.timeout_ms = 60000;
  const ProcessResult converted = run_process(convert);
  if (!converted.exited_with(0)) return "converting to protobuf failed: " + converted.err;
  return check({output + ".pftrace", "--json", output}, "the protobuf twin of " + output + " differs or breaks a rule");
}

}  // namespace proflaunch::testing
