// Where allocations come from and what the report says about them: the
// simulator's OOM program (the report's out-of-memory sentence, from the
// program's own numbers), a library that reaches cuMemAlloc only through
// cuGetProcAddress (libsimblas's workspace), and the trace domains that
// turn allocation tracing on and off.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <regex>

#include "tests/e2e/memory/support/memory_run.h"

namespace proflaunch::e2e {
namespace {

std::string gib_text(uint64_t mib) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(mib) / 1024.0);
  return text;
}

// oom allocates 256 MiB chunks until cudaMalloc fails, prints how many it
// held, frees them all and allocates once more.
TEST(MemorySources, TheOomReportStatesTheFailureWithTheStateAtThatMoment) {
  TempDir dir;
  const std::string trace = dir / "oom.trace";
  const ProcessResult run =
      testing::run_process(traced(trace, {build_path("OOM_PROGRAM"), "--chunk-mib", "256"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  std::smatch said;
  ASSERT_TRUE(std::regex_search(run.out, said, std::regex(R"(Tried to allocate (\d+) MiB .* already allocated in (\d+) chunks)")))
      << run.out;
  const uint64_t chunk_mib = std::stoull(said[1]);
  const uint64_t chunks = std::stoull(said[2]);
  ASSERT_GT(chunks, 0u);

  const ProcessResult report = run_proftrace({"memory", trace});
  ASSERT_TRUE(report.exited_with(0)) << report.describe();
  const std::string sentence = ": requested " + std::to_string(chunk_mib) + ".0 MiB with " +
                               gib_text(chunks * chunk_mib) + " allocated in " + std::to_string(chunks) +
                               " blocks (" + gib_text(chunks * chunk_mib) + " reserved); largest live blocks: " +
                               std::to_string(chunk_mib) + ".0 MiB (cudaMalloc, ";
  EXPECT_NE(report.out.find(sentence), std::string::npos) << report.out;
  EXPECT_TRUE(std::regex_search(report.out, std::regex(R"(\n  out of memory at \d+\.\d{3} s on device 0 \(pid \d+, cudaMalloc, thread \d+\): )")))
      << report.out;
  EXPECT_NE(report.out.find("Failed allocations (1):"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("Never freed by exit"), std::string::npos) << "oom frees everything";
  // The peak is everything it held when the allocation failed.
  EXPECT_NE(report.out.find("peak allocated " + gib_text(chunks * chunk_mib)), std::string::npos) << report.out;
}

TEST(MemorySources, ALibraryReachingTheDriverOnlyThroughCuGetProcAddressIsTraced) {
  const char* built = std::getenv("BLAS_WORKSPACE");  // unset: no nvcc, so no libsimblas
  if (built == nullptr || *built == '\0') GTEST_SKIP() << "libsimblas needs nvcc, which this build does not have";
  const std::string program = built;
  TempDir dir;
  const std::string trace = dir / "blas.trace";
  const ProcessResult run = testing::run_process(traced(trace, {program}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  int allocs = 0, frees = 0;
  for (const MemoryCall& call : memory_calls(trace)) {
    EXPECT_FALSE(call.via_runtime()) << call.api << ": libsimblas never calls the runtime";
    if (call.api == "cuMemAlloc") {
      ++allocs;
      EXPECT_EQ(+call.operation.bytes, 4u << 20) << "the documented 4 MiB workspace";
      EXPECT_EQ(+call.span().result, 0);
      EXPECT_NE(+call.operation.address, 0u);
    } else if (call.api == "cuMemFree") {
      ++frees;
    } else {
      ADD_FAILURE() << "unexpected memory call " << call.api;
    }
  }
  EXPECT_EQ(allocs, 2);
  EXPECT_EQ(frees, 2);
  const JsonValue report = memory_report(trace, dir);
  ASSERT_EQ(report["spaces"].items.size(), 1u);
  const JsonValue& device = report["spaces"].items[0];
  EXPECT_EQ(device["peak_allocated"]["bytes"].as_uint(), 8u << 20);
  EXPECT_EQ(device["live_at_peak"].items.at(0)["api"].str(), "cuMemAlloc");
  EXPECT_EQ(report["leaks"].items.size(), 0u);
}

TEST(MemorySources, OnlyTheMemoryDomainRecordsAllocations) {
  TempDir dir;
  const std::string only_cuda = dir / "cuda.trace", only_memory = dir / "memory.trace";
  const std::vector<std::string> program = {build_path("MEMORY_PHASES"), "--hold-ms", "0", "--gap-ms", "0"};
  ASSERT_TRUE(testing::run_process(traced(only_cuda, program, {"--trace=cuda"})).exited_with(0));
  ASSERT_TRUE(testing::run_process(traced(only_memory, program, {"--trace=memory"})).exited_with(0));
  EXPECT_TRUE(memory_calls(only_cuda).empty());
  const std::vector<MemoryCall> calls = memory_calls(only_memory);
  EXPECT_GT(calls.size(), 40u);
  // Runtime frames of the memory domain name the calls without the cuda domain.
  int named_by_runtime = 0;
  for (const MemoryCall& call : calls) named_by_runtime += call.via_runtime() ? 1 : 0;
  EXPECT_GT(named_by_runtime, 30);
}

}  // namespace
}  // namespace proflaunch::e2e
