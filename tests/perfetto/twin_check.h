// Every JSON the end-to-end tests convert is converted to protobuf as well,
// and tests/perfetto/pftrace_check.py checks that the protobuf follows the
// importer's rules and carries the same events (issue: "every e2e trace
// converted to both formats carries the same events"). Called by the e2e
// suites' run_proftrace after a successful `convert ... -o X.json`; a no-op
// for anything else or when PFTRACE_CHECKER is not set.
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
  const std::string suffix = ".json";
  if (json.size() <= suffix.size() || json.compare(json.size() - suffix.size(), suffix.size(), suffix) != 0)
    return "";
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
