// Running the proflaunch executable in tests, with the probe shim as its
// library (PROFLAUNCH_LIBRARY) so that probe_app records something.
#pragma once

#include <string>
#include <vector>

#include "tests/unit/preload/support/process_runner.h"
#include "tests/unit/preload/support/shim_run.h"
#include "tests/unit/preload/support/trace_contents.h"

namespace proflaunch::testing {

inline std::string launcher_path() { return required_env("PROFLAUNCH_EXE"); }

// proflaunch <launcher_args> -- <program...>
inline RunOptions launcher_options(const std::vector<std::string>& launcher_args,
                                   const std::vector<std::string>& program) {
  RunOptions options;
  options.argv.push_back(launcher_path());
  options.argv.insert(options.argv.end(), launcher_args.begin(), launcher_args.end());
  options.argv.push_back("--");
  options.argv.insert(options.argv.end(), program.begin(), program.end());
  options.set_env = {{"PROFLAUNCH_LIBRARY", probe_shim_path()}};
  options.unset_env = {"LD_PRELOAD", "PROFLAUNCH_PARTS_DIR", "PROFLAUNCH_EXEC_PARENT"};
  return options;
}

inline std::vector<std::string> probe(const std::vector<std::string>& args) {
  std::vector<std::string> command = {probe_app_path()};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

inline TraceContents load_file(const std::string& path) {
  std::string error;
  TraceContents trace = load_trace({path}, &error);
  EXPECT_EQ(error, "") << path;
  return trace;
}

inline bool file_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

}  // namespace proflaunch::testing
