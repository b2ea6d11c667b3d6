// SIGSEGV and abort: the program dies as it would untraced (proflaunch exits
// 128 + the signal, as a shell reports the untraced program's death), and
// the trace is readable and holds what the program did before it crashed,
// including the launches still in flight.
#include <gtest/gtest.h>
#include <signal.h>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr int kLaunches = 16;
constexpr int kInFlight = 4;

void check_crash(const std::string& mode, int signal_number) {
  const std::vector<std::string> program = {build_path("CRASH"), "--mode", mode, "--launches",
                                            std::to_string(kLaunches), "--in-flight",
                                            std::to_string(kInFlight)};
  const ProcessResult untraced_run = testing::run_process(untraced(program));
  ASSERT_TRUE(untraced_run.killed_by(signal_number)) << untraced_run.describe();

  TempDir dir;
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  EXPECT_TRUE(run.exited_with(128 + signal_number)) << run.describe();
  EXPECT_EQ(run.out, untraced_run.out);
  EXPECT_EQ(run.out, "crash: about to " + mode + "\n");

  const ProcessResult info = run_proftrace({"info", dir / "x.trace"});
  EXPECT_TRUE(info.exited_with(0)) << info.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  // The crash handler flushed: everything up to the crash is there.
  EXPECT_EQ(image.launch_count("ReluFunctor"), kLaunches) << describe(trace);
  EXPECT_EQ(image.launch_count("FillFunctor"), kInFlight) << describe(trace);
  EXPECT_EQ(image.copies().size(), 2u);
  int stream_syncs = 0;
  for (const HostCall* sync : image.syncs()) stream_syncs += sync->api == "cudaStreamSynchronize";
  EXPECT_EQ(stream_syncs, 1);
  for (const Operation* launch : image.launches()) EXPECT_EQ(launch->span.result, 0);
}

TEST(Crash, SegfaultKeepsTheTraceAndTheExitStatus) { check_crash("segv", SIGSEGV); }

TEST(Crash, AbortKeepsTheTraceAndTheExitStatus) { check_crash("abort", SIGABRT); }

}  // namespace
}  // namespace proflaunch::e2e
