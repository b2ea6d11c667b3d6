// proftrace stats --section overview: steps (NVTX, --step-range, periodicity,
// one step), the per-step breakdown with overlaps attributed by priority,
// utilization, and the kernel estimates per device (SM efficiency,
// occupancy, tensor-core share), from hand-built traces whose answers are known; the
// timeline's reordering and bins; the periodicity rule.
#include <gtest/gtest.h>

#include <span>
#include <sstream>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/stats/category_timeline.h"
#include "tools/proftrace/stats/step_periodicity.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;
using tools::stats::CategoryTimeline;
using tools::stats::TimeCategory;

constexpr uint64_t kT = 1'000'000'000;
constexpr uint32_t kMain = 100, kLoader = 200;
constexpr uint64_t kStream = 7;

using Row = std::vector<std::string>;

Row split_csv(const std::string& line) {
  Row cells(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.emplace_back();
    else cells.back() += c;
  }
  return cells;
}

struct CsvTable {
  Row columns;
  std::vector<Row> rows;
  std::string cell(const std::string& first, const std::string& column) const {
    for (const Row& row : rows)
      if (row.at(0) == first)
        for (size_t c = 0; c < columns.size(); ++c)
          if (columns[c] == column) return c < row.size() ? row[c] : "(short row)";
    return "(no cell " + first + "/" + column + ")";
  }
  size_t step_rows() const {
    size_t n = 0;
    for (const Row& row : rows) n += row.at(0) != "average" && row.at(0) != "total";
    return n;
  }
};

// CSV: "# title", columns, rows.
CsvTable csv_table(const std::string& out, const std::string& title) {
  CsvTable table;
  std::istringstream lines(out);
  bool inside = false, header = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      header = inside;
      continue;
    }
    if (!inside || line.empty()) continue;
    if (header) {
      table.columns = split_csv(line);
      header = false;
    } else {
      table.rows.push_back(split_csv(line));
    }
  }
  return table;
}

// CSV for the numbers; the text output for the notes (CSV has none).
struct Overview {
  int exit_code;
  std::string out, err, text;
};
Overview overview(const std::string& trace, const std::string& step_range = "", size_t top = 20) {
  tools::StatsCommand command;
  command.inputs = {trace};
  command.csv = true;
  command.sections = {"overview"};
  command.step_range = step_range;
  command.top = top;
  const CommandOutput csv = run_stats_on(command);
  command.csv = false;
  return Overview{csv.exit_code, csv.out, csv.err, run_stats_on(command).out};
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::span<const uint8_t> text_bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

NvtxEventRecord nvtx(NvtxEventType type, uint64_t at_ns) {
  NvtxEventRecord record{};
  record.type = static_cast<uint8_t>(type);
  record.message_type =
      static_cast<uint8_t>(type == NvtxEventType::kPush ? NvtxMessageType::kInline : NvtxMessageType::kNone);
  record.span = ApiSpan{at_ns - 10, at_ns, 0, 0, 0, 0};  // a push's range begins when it returns
  if (type == NvtxEventType::kPop) record.span = ApiSpan{at_ns, at_ns + 10, 0, 0, 0, 0};
  return record;
}

void range(TraceBuilder& trace, uint32_t tid, const std::string& name, uint64_t begin, uint64_t end) {
  trace.event_with_tail(1, tid, nvtx(NvtxEventType::kPush, begin), text_bytes(name));
  trace.event(1, tid, nvtx(NvtxEventType::kPop, end));
}

// Three "train_step" ranges of 1000 ns, 2000 ns apart, each (from its start B):
// kernel [B+100, B+400), copy [B+300, B+600), NCCL kernel [B+350, B+450),
// memset [B+650, B+700), cudaDeviceSynchronize [B+700, B+900) on the host.
// So: communication 100 (350-450 wins over kernel and copy), kernel 250
// (100-350), memcpy 150 (450-600), memset 50, sync wait 200, CPU only 250.
// Inside each step two nested "forward" ranges (6 in all: more than
// train_step, but not top-level) and, on a thread that launches nothing, 5
// top-level "load" ranges. One kernel on device 1 between steps 1 and 2.
// With `bookkeeping`, that many more top-level "bookkeeping" ranges on the
// main thread between the steps, around host code only (no launch).
std::string nvtx_steps_trace(int bookkeeping = 0) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kT);
  trace.device(1, DeviceSpec{.ordinal = 0, .name = "Simulated A", .multiprocessor_count = 108});
  trace.device(1, DeviceSpec{.ordinal = 1, .name = "Simulated B", .multiprocessor_count = 132});
  const uint16_t allreduce_api = trace.api(1, "ncclAllReduce", ApiDomain::kDriver);
  uint64_t correlation = 1;
  for (int s = 0; s < 3; ++s) {
    const uint64_t b = kT + 1000 + s * 2000;
    trace.event_with_tail(1, kMain, nvtx(NvtxEventType::kPush, b), text_bytes("train_step"));
    range(trace, kMain, "forward", b + 20, b + 60);
    trace.event(1, kMain, launch(p, correlation, b + 70, b + 80, 0xA, kStream));
    trace.event(1, kMain, activity(correlation++, b + 100, b + 400, kStream, GpuActivityKind::kKernel));
    trace.event(1, kMain, copy(p, correlation, b + 80, b + 90, 4096, kStream));
    trace.event(1, kMain, activity(correlation++, b + 300, b + 600, kStream, GpuActivityKind::kMemoryCopy));
    trace.event(1, kMain, launch(p, correlation, b + 90, b + 95, 0xC, kStream));
    CollectiveRecord call{};
    call.span = ApiSpan{b + 90, b + 99, correlation, 0, allreduce_api, kApiAsync};
    call.sequence = uint64_t(s) + 1;
    call.nranks = 1;
    call.op = static_cast<uint8_t>(CollectiveOp::kAllReduce);
    trace.event(1, kMain, call);
    trace.event(1, kMain, activity(correlation++, b + 350, b + 450, kStream, GpuActivityKind::kKernel));
    range(trace, kMain, "forward", b + 110, b + 200);
    trace.event(1, kMain, memset(p, correlation, b + 210, b + 220, 64, kStream));
    trace.event(1, kMain, activity(correlation++, b + 650, b + 700, kStream, GpuActivityKind::kMemorySet));
    SynchronizeRecord sync{};
    sync.span = ApiSpan{b + 700, b + 900, correlation++, 0, p.sync_api, 0};
    sync.target = static_cast<uint8_t>(SyncTarget::kDevice);
    trace.event(1, kMain, sync);
    trace.event(1, kMain, nvtx(NvtxEventType::kPop, b + 1000));
  }
  trace.event(1, kMain, launch(p, correlation, kT + 2150, kT + 2160, 0xB, kStream, 1));
  trace.event(1, kMain, activity(correlation++, kT + 2200, kT + 2300, kStream, GpuActivityKind::kKernel, 1));
  for (int i = 0; i < 5; ++i) range(trace, kLoader, "load", kT + 1100 + i * 900, kT + 1500 + i * 900);
  for (int i = 0; i < bookkeeping; ++i) range(trace, kMain, "bookkeeping", kT + 2300 + i * 100, kT + 2350 + i * 100);
  return write_trace(trace, "overview_nvtx.trace");
}

TEST(StatsOverview, NvtxStepsHaveTheExactBreakdownWithOverlapsByPriority) {
  const auto result = overview(nvtx_steps_trace());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable steps = csv_table(result.out, "step time breakdown");
  ASSERT_EQ(steps.step_rows(), 3u) << result.out;
  EXPECT_TRUE(has(result.text, "NVTX range 'train_step'")) << result.out;
  for (const std::string row : {"1", "2", "3", "average"}) {
    SCOPED_TRACE(row);
    EXPECT_EQ(steps.cell(row, "Duration (ns)"), "1000");
    EXPECT_EQ(steps.cell(row, "Communication (ns)"), "100");
    EXPECT_EQ(steps.cell(row, "Kernel (ns)"), "250");
    EXPECT_EQ(steps.cell(row, "Memcpy (ns)"), "150");
    EXPECT_EQ(steps.cell(row, "Memset (ns)"), "50");
    EXPECT_EQ(steps.cell(row, "Sync Wait (ns)"), "200");
    EXPECT_EQ(steps.cell(row, "CPU Only (ns)"), "250");
    EXPECT_EQ(steps.cell(row, "Other (ns)"), "0");
    EXPECT_EQ(steps.cell(row, "Kernel (%)"), "25.0");
  }
  EXPECT_EQ(steps.cell("2", "Start (ns)"), "2010") << "from the first event (the first push, at +990)";
  EXPECT_EQ(steps.cell("total", "Duration (ns)"), "3000");
  EXPECT_EQ(steps.cell("total", "Kernel (ns)"), "750");
}

// A range more frequent than the steps but around host code only (a
// module's bookkeeping) is no step: HTA found no GPU work in such steps.
TEST(StatsOverview, AFrequentRangeThatLaunchesNothingIsNoStep) {
  const auto result = overview(nvtx_steps_trace(5));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable steps = csv_table(result.out, "step time breakdown");
  EXPECT_EQ(steps.step_rows(), 3u) << result.out;
  EXPECT_TRUE(has(result.text, "NVTX range 'train_step'")) << result.out;
}

TEST(StatsOverview, UtilizationIsTheUnionOfGpuWorkOverTheAnalysedTime) {
  const auto result = overview(nvtx_steps_trace());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable util = csv_table(result.out, "GPU utilization");
  ASSERT_EQ(util.rows.size(), 3u) << result.out;
  // First event: the first push at +990; last: the last pop's end at +6010.
  EXPECT_EQ(util.cell("all", "Analysed (ns)"), "5020");
  EXPECT_EQ(util.cell("all", "Busy (ns)"), "1750") << "3 x ([100, 600) + [650, 700)) on device 0, 100 on device 1";
  EXPECT_EQ(util.cell("all", "Utilization (%)"), "34.9");
  ASSERT_EQ(util.rows[0].at(1), "0");
  EXPECT_EQ(util.rows[0].at(2), "1650");
  EXPECT_EQ(util.rows[1].at(2), "100");

  const CsvTable gpus = csv_table(result.out, "GPUs");
  ASSERT_EQ(gpus.rows.size(), 2u) << result.out;
  EXPECT_EQ(gpus.rows[1], (Row{"4242", "1", "132", "81920", "Simulated B"}));
}

TEST(StatsOverview, StepRangeNamesTheStepAtAnyDepth) {
  const auto result = overview(nvtx_steps_trace(), "forward");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable steps = csv_table(result.out, "step time breakdown");
  EXPECT_EQ(steps.step_rows(), 6u) << result.out;
  EXPECT_TRUE(has(result.text, "--step-range")) << result.out;
  EXPECT_EQ(steps.cell("1", "Duration (ns)"), "40");

  const auto other_domain = overview(nvtx_steps_trace(), "forward@elsewhere");
  ASSERT_EQ(other_domain.exit_code, 0) << other_domain.err;
  const CsvTable one = csv_table(other_domain.out, "step time breakdown");
  EXPECT_EQ(one.step_rows(), 1u) << other_domain.out;
  EXPECT_TRUE(has(other_domain.text, "whole run is one step")) << other_domain.out;

  EXPECT_NE(overview(nvtx_steps_trace(), "kernel:k").exit_code, 0) << "only NVTX ranges are steps here";
}

// Three devices. 0: an H100's limits (132 SMs, 2048 threads, 32 blocks, 64 Ki
// registers per SM). 1: an SM count only (no limits: HIP, older traces). 2: no
// DeviceInfo. On device 0, a tensor-core GEMM of 1320 blocks (10 per SM, 64
// registers: 4 blocks of 8 warps fit, occupancy 4 x 8 / 64 = 50%) for 600 ns
// and a small kernel of 66 blocks (0.5 per SM, 32 registers: min(8, 0.5) x 8 /
// 64 = 6.25%) for 400 ns, then a copy of 100 ns: busy 1100 ns. On device 1 a
// kernel of 50 blocks on 100 SMs for 200 ns; on device 2 one of 100 ns.
std::string kernel_estimates_trace() {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kT);
  trace.device(1, DeviceSpec{.ordinal = 0, .name = "H100", .multiprocessor_count = 132,
                             .max_threads_per_multiprocessor = 2048, .max_blocks_per_multiprocessor = 32,
                             .registers_per_multiprocessor = 65536, .registers_per_block = 65536,
                             .shared_bytes_per_multiprocessor = 233472, .shared_bytes_per_block = 49152,
                             .shared_bytes_per_block_optin = 232448, .reserved_shared_bytes_per_block = 1024,
                             .warp_size = 32, .compute_capability_major = 9});
  trace.device(1, DeviceSpec{.ordinal = 1, .name = "Counted", .multiprocessor_count = 100});
  const uint32_t known = kFunctionRegisters | kFunctionStaticShared;
  trace.function(1, 0xA, "sm90_xmma_gemm_f16f16_f32_tn", 0, {.registers_per_thread = 64, .known = known});
  trace.function(1, 0xB, "_Z5smallPf", 0, {.registers_per_thread = 32, .known = known});
  trace.function(1, 0xC, "_Z5otherPf", 0, {.registers_per_thread = 32, .known = known});
  auto kernel = [&](uint64_t correlation, uint64_t function, uint32_t blocks, int32_t device, uint64_t start,
                    uint64_t end) {
    KernelLaunchRecord record = launch(p, correlation, start - 50, start - 40, function, kStream, device);
    record.grid = {blocks, 1, 1};
    record.dynamic_shared_bytes = 0;
    trace.event(1, kMain, record);
    trace.event(1, kMain, activity(correlation, start, end, kStream, GpuActivityKind::kKernel, device));
  };
  kernel(1, 0xA, 1320, 0, kT + 1000, kT + 1600);
  kernel(2, 0xB, 66, 0, kT + 1700, kT + 2100);
  trace.event(1, kMain, copy(p, 3, kT + 2000, kT + 2010, 4096, kStream));
  trace.event(1, kMain, activity(3, kT + 2100, kT + 2200, kStream, GpuActivityKind::kMemoryCopy));
  kernel(4, 0xC, 50, 1, kT + 3000, kT + 3200);
  kernel(5, 0xC, 50, 2, kT + 4000, kT + 4100);
  return write_trace(trace, "overview_kernels.trace");
}

TEST(StatsOverview, KernelsTableEstimatesSmEfficiencyOccupancyAndTensorCoreSharePerDevice) {
  const auto result = overview(kernel_estimates_trace());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable kernels = csv_table(result.out, "Overview: kernels");
  ASSERT_EQ(kernels.rows.size(), 4u) << result.out;
  auto cell = [&](size_t row, const std::string& column) {
    for (size_t c = 0; c < kernels.columns.size(); ++c)
      if (kernels.columns[c] == column) return kernels.rows.at(row).at(c);
    return std::string("(no column " + column + ")");
  };
  ASSERT_EQ(cell(0, "Device"), "0");
  EXPECT_EQ(cell(0, "Kernel Time (ns)"), "1000");
  EXPECT_EQ(cell(0, "Kernels"), "2");
  EXPECT_EQ(cell(0, "SM Efficiency (%)"), "72.7") << "(1 x 600 + 0.5 x 400) / 1100 busy, the copy included";
  EXPECT_EQ(cell(0, "Est. Occupancy (%)"), "32.5") << "(50% x 600 + 6.25% x 400) / 1000";
  EXPECT_EQ(cell(0, "Tensor Core Time (ns)"), "600");
  EXPECT_EQ(cell(0, "Tensor Core (%)"), "60.0");

  ASSERT_EQ(cell(1, "Device"), "1");
  EXPECT_EQ(cell(1, "SM Efficiency (%)"), "50.0") << "50 blocks on 100 SMs";
  EXPECT_EQ(cell(1, "Est. Occupancy (%)"), "-") << "the device's limits are unknown";
  EXPECT_EQ(cell(1, "Tensor Core (%)"), "0.0");

  ASSERT_EQ(cell(2, "Device"), "2");
  EXPECT_EQ(cell(2, "SM Efficiency (%)"), "-") << "no DeviceInfo: no SM count";
  EXPECT_EQ(cell(2, "Est. Occupancy (%)"), "-");

  ASSERT_EQ(cell(3, "PID"), "all");
  EXPECT_EQ(cell(3, "Kernel Time (ns)"), "1300");
  EXPECT_EQ(cell(3, "SM Efficiency (%)"), "69.2") << "(800 + 100) / (1100 + 200): devices with an SM count";
  EXPECT_EQ(cell(3, "Est. Occupancy (%)"), "32.5") << "only device 0's launches had every input";
  EXPECT_EQ(cell(3, "Tensor Core (%)"), "46.2") << "600 of 1300";
  EXPECT_TRUE(has(result.text, "SM Efficiency is '-' on a device without DeviceInfo")) << result.text;
  EXPECT_TRUE(has(result.text, "Est. Occupancy is '-' where no launch had every input")) << result.text;
}

// Kernels launched 1000 ns apart on one thread, each running 100 ns.
std::string launches_trace(const std::vector<uint64_t>& kernels, const std::string& name) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kT);
  uint64_t at = kT + 1000;
  for (size_t i = 0; i < kernels.size(); ++i, at += 1000) {
    trace.event(1, kMain, launch(p, i + 1, at, at + 10, kernels[i], kStream));
    trace.event(1, kMain, activity(i + 1, at + 50, at + 150, kStream, GpuActivityKind::kKernel));
  }
  return write_trace(trace, name);
}

TEST(StatsOverview, WithoutNvtxAPeriodicKernelSequenceGivesTheSteps) {
  // Warm-up W1 W2, then 10 steps of A B C B: a step begins at each A.
  std::vector<uint64_t> kernels = {0x91, 0x92};
  for (int s = 0; s < 10; ++s) kernels.insert(kernels.end(), {0xA, 0xB, 0xC, 0xB});
  const auto result = overview(launches_trace(kernels, "overview_periodic.trace"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable steps = csv_table(result.out, "step time breakdown");
  EXPECT_EQ(steps.step_rows(), 10u) << result.out;
  EXPECT_TRUE(has(result.text, "periodicity")) << result.out;
  EXPECT_TRUE(has(result.text, "every 4 launches")) << result.out;
  EXPECT_EQ(steps.cell("1", "Start (ns)"), "2000") << "the first A, after the two warm-up launches";
  EXPECT_EQ(steps.cell("1", "Duration (ns)"), "4000");
  EXPECT_EQ(steps.cell("1", "Kernel (ns)"), "400");
  EXPECT_EQ(steps.cell("1", "CPU Only (ns)"), "3600");
}

TEST(StatsOverview, NeitherNvtxNorPeriodicityIsOneStep) {
  const auto result = overview(launches_trace({1, 2, 3, 4, 5, 6}, "overview_one.trace"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable steps = csv_table(result.out, "step time breakdown");
  ASSERT_EQ(steps.step_rows(), 1u) << result.out;
  EXPECT_TRUE(has(result.text, "whole run is one step")) << result.out;
  EXPECT_EQ(steps.cell("1", "Duration (ns)"), "5150") << "first launch to the last kernel's end";
  EXPECT_EQ(steps.cell("1", "Kernel (ns)"), "600");
}

TEST(StatsOverview, ManyStepsShowTheFirstAndLastRowsOnly) {
  std::vector<uint64_t> kernels;
  for (int s = 0; s < 30; ++s) kernels.insert(kernels.end(), {0xA, 0xB});
  const auto result = overview(launches_trace(kernels, "overview_many.trace"), "", 4);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const CsvTable steps = csv_table(result.out, "step time breakdown");
  ASSERT_EQ(steps.step_rows(), 4u) << result.out;
  EXPECT_EQ(steps.rows[2].at(0), "29");
  EXPECT_TRUE(has(result.text, "of 30 steps")) << result.out;
  EXPECT_EQ(steps.cell("total", "Kernel (ns)"), "6000") << "the total covers every step";
}

TEST(CategoryTimeline, ReordersWithinItsWindowAndCoarsensBinsForLongRuns) {
  CategoryTimeline timeline(/*reorder_window=*/4);
  timeline.add(500, 900, TimeCategory::kMemcpy, 0);
  timeline.add(100, 600, TimeCategory::kKernel, 0);  // earlier, read later
  timeline.add(800, 1000, TimeCategory::kSyncWait);
  timeline.add(1'000'000, 1'000'000 + (uint64_t{1} << 20), TimeCategory::kKernel, 1);  // outgrows 1 ns bins
  timeline.finish();
  EXPECT_EQ(timeline.late_intervals(), 0u);
  EXPECT_EQ(timeline.totals()[size_t(TimeCategory::kKernel)], 500u + (uint64_t{1} << 20));
  EXPECT_EQ(timeline.totals()[size_t(TimeCategory::kMemcpy)], 300u);
  EXPECT_EQ(timeline.totals()[size_t(TimeCategory::kSyncWait)], 100u);
  EXPECT_GT(timeline.bin_width_ns(), 1u);
  const auto all = timeline.breakdown(0, 4'000'000);
  EXPECT_DOUBLE_EQ(all[size_t(TimeCategory::kKernel)], 500.0 + double(uint64_t{1} << 20));
  EXPECT_EQ(timeline.device_busy_ns().at(0), 800u);
}

// A damaged trace's end near 2^64: the bins grow to the end of the clock and
// stop (the fuzzer found an endless doubling when width * bins wrapped).
TEST(CategoryTimeline, AnEndNearTheEndOfTheClockFinishes) {
  CategoryTimeline timeline(/*reorder_window=*/4);
  const uint64_t far = UINT64_MAX - 7;
  timeline.add(1000, 2000, TimeCategory::kMemcpy, 0);
  timeline.add(1'000'701'000, far, TimeCategory::kKernel, 0);
  timeline.finish();
  EXPECT_EQ(timeline.totals()[size_t(TimeCategory::kKernel)], far - 1'000'701'000);
  EXPECT_EQ(timeline.totals()[size_t(TimeCategory::kMemcpy)], 1000u);
  EXPECT_EQ(timeline.bin_width_ns(), uint64_t{1} << 47);
  const auto all = timeline.breakdown(0, UINT64_MAX);
  EXPECT_NEAR(all[size_t(TimeCategory::kKernel)], double(far - 1'000'701'000), 1e6);
}

TEST(Periodicity, SmallestPeriodAndAKernelThatRunsOncePerStep) {
  std::vector<uint64_t> s = {9, 8};
  for (int i = 0; i < 20; ++i) s.insert(s.end(), {1, 2, 3, 2, 4});
  const auto found = tools::stats::find_periodicity(s);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->period, 5u);
  EXPECT_EQ(found->first_kernel, 1u);

  EXPECT_FALSE(tools::stats::find_periodicity({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}).has_value());
  std::vector<uint64_t> twice_each;  // every kernel twice per period: no kernel marks the step
  for (int i = 0; i < 10; ++i) twice_each.insert(twice_each.end(), {1, 2, 1, 2, 3, 3});
  EXPECT_FALSE(tools::stats::find_periodicity(twice_each).has_value());
}

}  // namespace
}  // namespace proflaunch::testing

namespace proflaunch::testing {
namespace {

// An AMD device is numbered kAmdDeviceBase + its HIP ordinal in the trace;
// the overview names it as HIP does.
TEST(StatsOverview, AmdDevicesShowTheirHipOrdinal) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 4242, kT);
  const int32_t amd1 = format::kAmdDeviceBase + 1;
  trace.device(1, DeviceSpec{.ordinal = amd1, .name = "Simulated MI", .multiprocessor_count = 104});
  trace.event(1, kMain, launch(p, 1, kT + 10, kT + 20, 0xA, kStream, amd1));
  trace.event(1, kMain, activity(1, kT + 100, kT + 400, kStream, GpuActivityKind::kKernel, amd1));
  const Overview o = overview(write_trace(trace, "amd.trace"));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(csv_table(o.out, "Overview: GPUs").cell("4242", "Device"), "AMD GPU 1") << o.out;
  EXPECT_EQ(csv_table(o.out, "Overview: GPU utilization").cell("4242", "Device"), "AMD GPU 1") << o.out;
  EXPECT_EQ(csv_table(o.out, "Overview: GPU utilization").cell("4242", "Busy (ns)"), "300") << o.out;
}

}  // namespace
}  // namespace proflaunch::testing
