// Full disk, simulated with RLIMIT_FSIZE on the launcher and the program:
// writing the trace fails (EFBIG; SIGXFSZ is blocked on the shim's writer),
// yet the program runs to its normal end with its normal output and exit
// status, and the problem is reported on stderr.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

// Each process's part fits under the limit, the joined file does not: the
// launcher must get EFBIG (not die of SIGXFSZ), keep the parts, say so, and
// still exit with the program's status; --join later assembles the trace.
TEST(FullDisk, AJoinThatDoesNotFitKeepsThePartsAndTheExitStatus) {
  TempDir dir;
  const int children = 3;
  const std::vector<std::string> program = {build_path("FORK_GPU"), "--children", std::to_string(children),
                                            "--launches", "2"};
  // The four parts are alike (same program, same records; module lists and
  // stacks make their size depend on the machine), so half the size of an
  // unlimited run's joined trace holds any one part but not the join.
  const ProcessResult unlimited = testing::run_process(traced(dir / "size.trace", program));
  ASSERT_TRUE(unlimited.exited_with(0)) << unlimited.describe();
  struct stat size_stat {};
  ASSERT_EQ(stat((dir / "size.trace").c_str(), &size_stat), 0);
  const off_t joined_size = size_stat.st_size;
  unlink((dir / "size.trace").c_str());

  RunOptions options = traced(dir / "x.trace", program);
  options.file_size_limit_bytes = static_cast<rlim_t>(joined_size / 2);
  const ProcessResult run = testing::run_process(options);
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(run.err.find("cannot write the joined trace"), std::string::npos) << run.err;
  EXPECT_EQ(testing::list_files(dir.path(), "").size(), 1u) << "only the parts directory is left";
  ASSERT_EQ(testing::list_files(dir / "x.trace.parts", ".part").size(), static_cast<size_t>(children + 1));

  const ProcessResult joined =
      testing::run_process(untraced({build_path("PROFLAUNCH_EXE"), "--join", dir / "x.trace"}));
  ASSERT_TRUE(joined.exited_with(0)) << joined.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  EXPECT_EQ(trace.images.size(), static_cast<size_t>(children + 1)) << describe(trace);
  EXPECT_TRUE(trace.report.clean());
}

}  // namespace
}  // namespace proflaunch::e2e
