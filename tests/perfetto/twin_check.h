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
  std::string json;
  for (size_t i = 1; i + 1 < twin_args.size(); ++i) {
    if (twin_args[i] == "-o" || twin_args[i] == "--output") {
      json = twin_args[i + 1];
      twin_args[i + 1] = json + ".pftrace";
    }
  }
  const auto ends_with = [](const std::string& text, const std::string& suffix) {
    return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(json, ".pftrace") || ends_with(json, ".pftrace.gz")) {
    // Written as protobuf: no twin to make, but the checker (and Perfetto's
    // importer, where TRACE_PROCESSOR is set) still reads it.
    RunOptions check;
    check.argv = {python, checker, json};
    check.timeout_ms = 120000;
    const ProcessResult checked = run_process(check);
    if (!checked.exited_with(0)) return json + " breaks a rule:\n" + checked.err;
    return "";
  }
  if (!ends_with(json, ".json")) return "";
  RunOptions convert;
  convert.argv = {proftrace};
  convert.argv.insert(convert.argv.end(), twin_args.begin(), twin_args.end());
  convert.timeout_ms = 60000;
  const ProcessResult converted = run_process(convert);
  if (!converted.exited_with(0)) return "converting to protobuf failed: " + converted.err;
  RunOptions check;
  check.argv = {python, checker, json + ".pftrace", "--json", json};
  check.timeout_ms = 120000;
  const ProcessResult checked = run_process(check);
  if (!checked.exited_with(0)) return "the protobuf twin of " + json + " differs or breaks a rule:\n" + checked.err;
  return "";
}

}  // namespace proflaunch::testing
