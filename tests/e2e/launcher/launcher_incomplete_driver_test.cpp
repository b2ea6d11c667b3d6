// A driver that lacks most functions (no events, streams, names, pointer
// queries: an old or a stub libcuda) under the real shim, with each GPU
// timing setting: the program runs as without the profiler (GPU timing by
// events once called a null cuStreamDestroy here, killing the program).
#include <gtest/gtest.h>

#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::testing {
namespace {

std::string env_or_fail(const char* name) {
  const char* value = std::getenv(name);
  EXPECT_NE(value, nullptr) << name;
  return value != nullptr ? value : "";
}

TEST(IncompleteDriver, TheProgramRunsAsWithoutTheProfilerWhateverTheTiming) {
  const std::string app = env_or_fail("INCOMPLETE_DRIVER_APP");
  const std::string library_dir = env_or_fail("INCOMPLETE_DRIVER_DIR");
  RunOptions plain;
  plain.argv = {app};
  plain.set_env = {{"LD_LIBRARY_PATH", library_dir}};
  const ProcessResult untraced = run_process(plain);
  ASSERT_TRUE(untraced.exited_with(0)) << untraced.describe();
  for (const char* timing : {"auto", "events", "cupti", "none"}) {
    SCOPED_TRACE(timing);
    TempDir dir;
    RunOptions traced;
    traced.argv = {env_or_fail("PROFLAUNCH_EXE"), "-q", std::string("--gpu-timing=") + timing, "-o",
                   dir.path() + "/t.trace", "--", app};
    traced.set_env = {{"LD_LIBRARY_PATH", library_dir}};
    const ProcessResult run = run_process(traced);
    EXPECT_TRUE(run.exited_with(0)) << run.describe();
    EXPECT_EQ(run.out, untraced.out);
  }
}

}  // namespace
}  // namespace proflaunch::testing
