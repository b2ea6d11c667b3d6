// proftrace stats: GPU time per kernel and host time per API, summed from
// hand-built traces whose numbers are known.
#include <gtest/gtest.h>

#include <span>
#include <sstream>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 1'000'000'000;

// CSV rows of one table, each split into cells.
std::vector<std::vector<std::string>> csv_rows(const std::string& out, const std::string& title) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      std::getline(lines, line);  // column names
      continue;
    }
    if (!inside || line.empty()) continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream split(line);
    while (std::getline(split, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

std::string two_kernel_trace() {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  p.launch_api = trace.api(1, "cuLaunchKernel", ApiDomain::kDriver);
  trace.function(1, 0xA, "_Z4gemmPf", kStart);
  trace.function(1, 0xB, "relu_kernel", kStart);
  // gemm: 3 launches of 100, 200, 300 ns of GPU time; relu: 1 of 1000 ns.
  // One launch's activity arrives before it (either order must join).
  const uint64_t gemm_durations[] = {100, 200, 300};
  for (uint64_t i = 0; i < 3; ++i) {
    trace.event(1, 100, launch(p, i + 1, kStart + i * 10000, kStart + i * 10000 + 50, 0xA, kStreamLegacy));
    trace.event(1, 100, activity(i + 1, kStart + i * 10000 + 100, kStart + i * 10000 + 100 + gemm_durations[i],
                                 kStreamLegacy, GpuActivityKind::kKernel));
  }
  trace.event(1, 100, activity(9, kStart + 90000, kStart + 91000, kStreamLegacy, GpuActivityKind::kKernel));
  KernelLaunchRecord failed = launch(p, 9, kStart + 80000, kStart + 80040, 0xB, kStreamLegacy);
  trace.event(1, 100, failed);
  failed = launch(p, 10, kStart + 95000, kStart + 95060, 0xB, kStreamLegacy);
  failed.span.result = 700;  // an error, and no GPU work
  trace.event(1, 100, failed);
  return write_trace(trace, "stats.trace");
}

TEST(Stats, SumsGpuTimePerKernelName) {
  tools::StatsCommand command;
  command.inputs = {two_kernel_trace()};
  command.csv = true;
  const CommandOutput result = run_stats_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto rows = csv_rows(result.out, "GPU kernels");
  ASSERT_EQ(rows.size(), 2u) << result.out;
  // Sorted by total time: relu (1000) then gemm (600); demangled names.
  EXPECT_EQ(rows[0][1], "1000");
  EXPECT_EQ(rows[0][2], "1");
  EXPECT_EQ(rows[0].back(), "relu_kernel");
  EXPECT_EQ(rows[1][1], "600");
  EXPECT_EQ(rows[1][2], "3");
  EXPECT_EQ(rows[1][3], "200");  // average
  EXPECT_EQ(rows[1][4], "100");  // min
  EXPECT_EQ(rows[1][5], "300");  // max
  EXPECT_EQ(rows[1].back(), "gemm(float*)");
}

TEST(Stats, CountsApiCallsTimeAndErrors) {
  tools::StatsCommand command;
  command.inputs = {two_kernel_trace()};
  command.csv = true;
  command.sections = {"api"};
  const CommandOutput result = run_stats_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out.find("GPU kernels"), std::string::npos) << "only the api section was asked for";
  const auto rows = csv_rows(result.out, "API calls");
  ASSERT_EQ(rows.size(), 1u) << result.out;
  EXPECT_EQ(rows[0][1], std::to_string(50 * 3 + 40 + 60));  // total host time
  EXPECT_EQ(rows[0][2], "5");
  EXPECT_EQ(rows[0][6], "1");  // errors
  EXPECT_EQ(rows[0].back(), "cuLaunchKernel");
}

NvtxEventRecord nvtx_event(NvtxEventType type, uint64_t range_id, uint64_t at_ns) {
  NvtxEventRecord record{};
  record.type = static_cast<uint8_t>(type);
  record.message_type = static_cast<uint8_t>(type == NvtxEventType::kStart ? NvtxMessageType::kInline
                                                                            : NvtxMessageType::kNone);
  record.span = ApiSpan{at_ns, at_ns + 10, 0, 0, 0, 0};
  record.range_id = range_id;
  return record;
}

// Records of different threads are not in time order in the file: a range
// ended by another thread can be read before the launches its own thread
// made inside it (they went out in a later flush).
TEST(Stats, ARangeEndedOnAnotherThreadKeepsTheWorkItsThreadLaunchedBeforeTheEnd) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  p.launch_api = trace.api(1, "cuLaunchKernel", ApiDomain::kDriver);
  trace.function(1, 0xA, "k", kStart);
  const std::string name = "whole run";
  trace.event_with_tail(1, 100, nvtx_event(NvtxEventType::kStart, 7, kStart + 100),
                        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(name.data()), name.size()));
  trace.event_with_tail(1, 200, nvtx_event(NvtxEventType::kEnd, 7, kStart + 5000), std::span<const uint8_t>());
  trace.event(1, 100, launch(p, 1, kStart + 1000, kStart + 1050, 0xA, kStreamLegacy));
  trace.event(1, 100, activity(1, kStart + 1500, kStart + 2500, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(1, 100, launch(p, 2, kStart + 6000, kStart + 6050, 0xA, kStreamLegacy));  // after the end
  trace.event(1, 100, activity(2, kStart + 6500, kStart + 9500, kStreamLegacy, GpuActivityKind::kKernel));

  tools::StatsCommand command;
  command.inputs = {write_trace(trace, "nvtx.trace")};
  command.csv = true;
  command.sections = {"nvtx-gpu"};
  const CommandOutput result = run_stats_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto rows = csv_rows(result.out, "projected onto the GPU");
  ASSERT_EQ(rows.size(), 1u) << result.out;
  EXPECT_EQ(rows[0].back(), "whole run");
  EXPECT_EQ(rows[0][1], "1000") << "the first launch's GPU time, not the one after the end";
  EXPECT_EQ(rows[0][2], "1");
}

TEST(Stats, AnUnknownSectionIsAnError) {
  tools::StatsCommand command;
  command.inputs = {two_kernel_trace()};
  command.sections = {"no-such-table"};
  const CommandOutput result = run_stats_on(command);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("no section named 'no-such-table'"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("gpu-kernels"), std::string::npos) << result.err;
}

TEST(Stats, GarbageInputIsAnError) {
  const std::string path = temp_path("garbage.trace");
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs("definitely not a trace", f);
  std::fclose(f);
  tools::StatsCommand command;
  command.inputs = {path};
  const CommandOutput result = run_stats_on(command);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_FALSE(result.err.empty());
}

}  // namespace
}  // namespace proflaunch::testing
