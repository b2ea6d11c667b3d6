// Running a target program under the real launcher and shim on the simulated
// CUDA stack, as a user would: `proflaunch -o <dir>/x.trace -- program`.
// Paths come from the build (environment variables set by meson.build).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/cuda/support/cuda_trace.h"
#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::e2e {

using testing::ProcessResult;
using testing::RunningProcess;
using testing::RunOptions;
using testing::TempDir;

// A path the build passes in (fails the test loudly when missing).
std::string build_path(const char* variable);

// The environment of an untraced run on the simulated stack: simulated
// libraries first on the library path, nothing of proflaunch set.
RunOptions untraced(const std::vector<std::string>& program,
                    const std::vector<std::pair<std::string, std::string>>& env = {});

// proflaunch <launcher_args> -o <trace> -- <program>, with the environment
// above. The launcher finds libproflaunch.so next to itself in the build tree.
RunOptions traced(const std::string& trace, const std::vector<std::string>& program,
                  const std::vector<std::string>& launcher_args = {},
                  const std::vector<std::pair<std::string, std::string>>& env = {});

// Under scripts/sanitize.sh, which preloads the sanitizer's runtime first
// (SANITIZER_PRELOAD): the shim does not sample sanitized programs, and the
// sanitizer's own interceptors (read, poll, condition variables ...) run
// before the shim's OS runtime hooks.
bool sanitized_run();

// Runs proftrace with `args`.
ProcessResult run_proftrace(const std::vector<std::string>& args);

// Loads a trace and fails the current test (non-fatally) if it cannot be read.
CudaTrace load_trace_or_fail(const std::string& path);

// A short description of what a trace holds, for assertion messages.
std::string describe(const CudaTrace& trace);

}  // namespace proflaunch::e2e
