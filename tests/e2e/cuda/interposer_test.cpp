// Another interposer next to the shim: the user's own LD_PRELOAD library
// wraps cudaMemcpyAsync and pthread_setname_np (both wrapped by the shim
// too) and finds the next definitions with dlsym(RTLD_NEXT). Under
// proflaunch the launcher keeps it, both wrappers run for every call, the
// program behaves, and the trace is as complete as without it.
#include <gtest/gtest.h>

#include <regex>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr int kThreads = 2;
constexpr int kIterations = 3;

TEST(Interposer, ASecondPreloadedWrapperAndTheShimBothSeeEveryCall) {
  TempDir dir;
  const std::vector<std::string> program = {build_path("MULTI_STREAM_THREADS"), "--threads",
                                            std::to_string(kThreads), "--iterations",
                                            std::to_string(kIterations), "--elements", "4096"};
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", program, {}, {{"LD_PRELOAD", testing::preload_list(build_path("COUNTING_INTERPOSER"))}}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  // Worker i runs (i + 1) * iterations rounds of two copies.
  const int rounds = kIterations * (1 + 2);
  EXPECT_NE(run.out.find("copies=" + std::to_string(2 * rounds) + " ok"), std::string::npos) << run.out;
  // The wrapper ran (and found the real functions) for every call.
  std::smatch counts;
  ASSERT_TRUE(std::regex_search(run.err, counts,
                                std::regex("counting_interposer: cudaMemcpyAsync=([0-9]+) "
                                           "pthread_setname_np=([0-9]+) next=(\\w+)")))
      << run.err;
  EXPECT_EQ(std::stoi(counts[1]), 2 * rounds);
  EXPECT_EQ(std::stoi(counts[2]), kThreads);
  EXPECT_EQ(counts[3], "ok");

  // The shim saw the same calls.
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  int async_copies = 0;
  for (const Operation* copy : image.copies()) async_copies += copy->api == "cudaMemcpyAsync";
  EXPECT_EQ(async_copies, 2 * rounds);
  EXPECT_EQ(image.launches().size(), static_cast<size_t>(2 * rounds));
  std::set<std::string> names;
  for (const Operation* launch : image.launches()) names.insert(image.thread_name(launch->tid));
  EXPECT_EQ(names, (std::set<std::string>{"worker-0", "worker-1"}));
  for (const Operation& op : image.operations) EXPECT_EQ(op.gpu.size(), 1u) << op.api;
}

}  // namespace
}  // namespace proflaunch::e2e
