// Stacks are interned: a call site repeated N times is defined once, and
// each repetition adds only a CallStack record that delta coding and zstd
// shrink to almost nothing. The file grows with the number of distinct
// stacks, not with the number of calls.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/stacks/support/stack_output.h"

namespace proflaunch::e2e {
namespace {

struct RunResult {
  uint64_t file_bytes = 0;
  std::map<std::string, uint64_t> counts;
  uint64_t count(const std::string& kind) const { return counts.count(kind) ? counts.at(kind) : 0; }
};

RunResult run_repeats(const TempDir& dir, int repeats, const std::string& stacks) {
  const std::string trace = dir / (stacks + std::to_string(repeats) + ".trace");
  const ProcessResult result = testing::run_process(
      traced(trace,
             {build_path("STACK_CHAINS"), "--library", build_path("STACK_CHAIN_LIB"), "--repeat",
              std::to_string(repeats)},
             // The simulated driver's stream threads wait on condition variables
             // (their blocking calls' stacks), and CPU samples add stacks of their
             // own: either would vary the counts this test compares.
             {"--stacks=" + stacks, "--gpu-timing=none", "--osrt-threshold=off", "--cpu-sampling=off"}));
  EXPECT_TRUE(result.exited_with(0)) << result.describe();
  RunResult run;
  struct stat info {};
  if (stat(trace.c_str(), &info) == 0) run.file_bytes = static_cast<uint64_t>(info.st_size);
  run.counts = record_counts(trace);
  return run;
}

TEST(Dedup, RepeatedCallSitesAreDefinedOnceAndCostFewBytes) {
  TempDir dir;
  const RunResult few = run_repeats(dir, 20, "all");
  const RunResult many = run_repeats(dir, 400, "all");
  const RunResult few_plain = run_repeats(dir, 20, "none");
  const RunResult many_plain = run_repeats(dir, 400, "none");

  // Each repetition is a copy and a memset, each with its CallStack.
  const uint64_t extra_operations = (400 - 20) * 2;
  EXPECT_EQ(many.count("CallStack") - few.count("CallStack"), extra_operations);
  // ... and no new definition: the same five sites (copy, memset, sync, and
  // the program's one cudaMalloc and cudaFree).
  EXPECT_EQ(many.count("NativeStackDef"), few.count("NativeStackDef"));
  EXPECT_EQ(few.count("NativeStackDef"), 5u);
  EXPECT_EQ(many.count("ModuleDef"), few.count("ModuleDef"));

  // What a repeated operation adds to the file, and what its stack adds.
  const double bytes_per_operation =
      static_cast<double>(many.file_bytes - few.file_bytes) / static_cast<double>(extra_operations);
  const double plain_bytes_per_operation =
      static_cast<double>(many_plain.file_bytes - few_plain.file_bytes) / static_cast<double>(extra_operations);
  RecordProperty("bytes_per_operation_with_stacks", std::to_string(bytes_per_operation));
  RecordProperty("bytes_per_operation_without", std::to_string(plain_bytes_per_operation));
  EXPECT_LT(bytes_per_operation, 24.0);
  EXPECT_LT(bytes_per_operation - plain_bytes_per_operation, 4.0)
      << "with stacks " << bytes_per_operation << " B, without " << plain_bytes_per_operation << " B";
}

}  // namespace
}  // namespace proflaunch::e2e
