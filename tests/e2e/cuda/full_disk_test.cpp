// Full disk, simulated with RLIMIT_FSIZE on the launcher and the program:
// writing the trace fails (EFBIG; SIGXFSZ is blocked on the shim's writer),
// yet the program runs to its normal end with its normal output and exit
// status, and the problem is reported on stderr.
#include <gtest/gtest.h>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

TEST(FullDisk, TheProgramFinishesNormallyAndTheProblemIsReported) {
  const std::vector<std::string> program = {build_path("TRAINING_LOOP"), "--steps", "30"};
  const ProcessResult normal = testing::run_process(untraced(program));
  ASSERT_TRUE(normal.exited_with(0)) << normal.describe();

  TempDir dir;
  RunOptions options = traced(dir / "x.trace", program);
  // Room for the definitions, not for 30 steps of events.
  options.file_size_limit_bytes = 4096;
  const ProcessResult run = testing::run_process(options);
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, normal.out);
  EXPECT_NE(run.err.find("proflaunch: cannot write"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("File too large"), std::string::npos) << run.err;

  // What could be written is still a readable trace.
  const ProcessResult info = run_proftrace({"info", dir / "x.trace"});
  EXPECT_TRUE(info.exited_with(0)) << info.describe();
}

}  // namespace
}  // namespace proflaunch::e2e
