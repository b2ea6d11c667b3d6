// Running probe_app for the shim's tests: traced (the probe shim preloaded,
// parts into a temporary directory) or untraced (no trace of proflaunch in
// the environment), with the paths the build passes in.
#pragma once

#include <string>
#include <vector>

#include "tests/unit/preload/support/process_runner.h"
#include "tests/unit/preload/support/trace_contents.h"

namespace proflaunch::testing {

inline std::string probe_app_path() { return required_env("PROBE_APP"); }
inline std::string probe_shim_path() { return required_env("PROBE_SHIM"); }

inline RunOptions untraced_probe(const std::vector<std::string>& args) {
  RunOptions options;
  options.argv.push_back(probe_app_path());
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.unset_env = {"LD_PRELOAD", "PROFLAUNCH_PARTS_DIR", "PROFLAUNCH_BUFFER_SIZE",
                       "PROFLAUNCH_FLUSH_INTERVAL_MS", "PROFLAUNCH_VERBOSE",
                       "PROFLAUNCH_EXEC_PARENT", "PROFLAUNCH_TRACE", "PROFLAUNCH_GPU_TIMING"};
  return options;
}

inline RunOptions traced_probe(const std::string& parts_dir, const std::vector<std::string>& args) {
  RunOptions options = untraced_probe(args);
  options.set_env = {{"LD_PRELOAD", preload_list(probe_shim_path())}, {"PROFLAUNCH_PARTS_DIR", parts_dir}};
  return options;
}

inline TraceContents load_parts(const std::string& parts_dir, std::string* error) {
  return load_trace(list_files(parts_dir, ".part"), error);
}

// Values emitted by probe_app as origin * kOriginStride + sequence.
inline constexpr uint64_t kOriginStride = 1000000;
inline uint64_t origin_of(uint64_t value) { return value / kOriginStride; }

}  // namespace proflaunch::testing
