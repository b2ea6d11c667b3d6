// proftrace info: the header, processes, counts, time span, drops, damage.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 2'000'000'000;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TraceBuilder two_process_trace() {
  TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 400});
  ProcessSpec spec;
  spec.pid = 4242;
  spec.ppid = 77;
  spec.host = "gpu-node-3";
  spec.argv = {"torchrun", "--nproc", "2", "train.py"};
  spec.rank = 1;
  spec.local_rank = 1;
  spec.world_size = 2;
  spec.monotonic_ns = kStart;
  spec.realtime_ns = 1'700'000'000'123'456'789;
  trace.process(1, spec);
  const TracedProcess other = add_process(trace, 2, 5151, kStart + 10, "gpu-node-3", "worker");
  TracedProcess first{1, 4242, kStart};
  first.launch_api = trace.api(1, "cuLaunchKernel", ApiDomain::kDriver);
  for (uint64_t i = 1; i <= 5; ++i) {
    trace.event(1, 4242, launch(first, i, kStart + i * 1000, kStart + i * 1000 + 100, 0x1, kStreamLegacy));
    trace.event(1, 4242, activity(i, kStart + i * 1000 + 200, kStart + i * 1000 + 900, kStreamLegacy,
                                  GpuActivityKind::kKernel));
  }
  LostRecord lost{};
  lost.reason = static_cast<uint32_t>(LostReason::kBufferFull);
  lost.first_ns = kStart + 100;
  lost.last_ns = kStart + 200;
  lost.count = 10;
  trace.event(1, 4242, lost);
  lost.reason = static_cast<uint32_t>(LostReason::kWriteFailed);
  lost.count = 5;
  lost.last_ns = kStart + 9'000'000'000;  // the last timestamp of the trace
  trace.event(2, 5151, lost);
  trace.event(2, 5151, copy(other, 1, kStart + 50, kStart + 60, 100, kStreamLegacy));
  trace.section_end(1, kStart + 8000, 12, 15);
  return trace;
}

TEST(Info, DescribesHeaderProcessesCountsSpanAndDrops) {
  TraceBuilder trace = two_process_trace();
  const std::string path = write_trace(trace, "run.trace");
  const CommandOutput result = run_info_on({path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  EXPECT_TRUE(contains(out, "trace format version 1")) << out;
  EXPECT_TRUE(contains(out, "processes: 2")) << out;
  EXPECT_TRUE(contains(out, "pid 4242 (ppid 77) on gpu-node-3, rank 1 of 2 (local rank 1)")) << out;
  EXPECT_TRUE(contains(out, "command line: torchrun --nproc 2 train.py")) << out;
  EXPECT_TRUE(contains(out, "started 2023-11-14T22:13:20.123456789Z")) << out;
  EXPECT_TRUE(contains(out, "complete: 12 records written, 15 dropped")) << out;
  EXPECT_TRUE(contains(out, "pid 5151")) << out;
  EXPECT_TRUE(contains(out, "INCOMPLETE: no SectionEnd")) << out;
  EXPECT_TRUE(contains(out, "KernelLaunch                5")) << out;
  EXPECT_TRUE(contains(out, "GpuActivity                 5")) << out;
  EXPECT_TRUE(contains(out, "MemoryCopy                  1")) << out;
  EXPECT_TRUE(contains(out, "Lost                        2")) << out;
  // First timestamp: the copy's begin at +50 ns; last: the second LOST's end.
  EXPECT_TRUE(contains(out, "time span: 8.999999950 s")) << out;
  EXPECT_TRUE(contains(out, "dropped events: 15 in 2 LOST records, buffer full: 10, write failed: 5")) << out;
  EXPECT_TRUE(contains(out, "SectionEnd.records_dropped total: 15")) << out;
  EXPECT_TRUE(contains(out, "recovery: clean")) << out;
}

TEST(Info, ReportsTruncationAndWhatWasRecovered) {
  TraceBuilder trace = two_process_trace();
  std::vector<uint8_t> bytes = trace.bytes();
  const auto& last = trace.chunks().back();
  bytes.resize(last.offset + 7);
  const std::string path = temp_path("cut.trace");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);

  const CommandOutput result = run_info_on({path});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, std::to_string(trace.chunks().size() - 1) + " chunks ok")) << result.out;
  EXPECT_TRUE(contains(result.out, "tail truncated")) << result.out;
  EXPECT_TRUE(contains(result.out, "TRUNCATED: the file ends inside a chunk at offset " + std::to_string(last.offset)))
      << result.out;
  EXPECT_TRUE(contains(result.out, "recovery: the input was damaged")) << result.out;
}

TEST(Info, FailsClearlyOnMissingAndNewerFiles) {
  const CommandOutput missing = run_info_on({temp_path("nope.trace")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.err, "nope.trace: cannot open")) << missing.err;

  TraceBuilder trace;
  add_process(trace, 1, 1, kStart);
  std::vector<uint8_t> bytes = trace.bytes();
  FileHeader header = make_file_header();
  header.format_version = 9;
  std::memcpy(bytes.data(), &header, sizeof header);
  const std::string path = temp_path("future.trace");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  const CommandOutput newer = run_info_on({path});
  EXPECT_EQ(newer.exit_code, 1);
  EXPECT_TRUE(contains(newer.err, "future.trace: written in trace format version 9")) << newer.err;
}

}  // namespace
}  // namespace proflaunch::testing
