// `proftrace stats --section code` on hand-built traces whose sums are
// known: GPU time, launches and bytes attributed to the user's frame (never
// to the runtime or cuBLAS frames above it), summed by line, function, file
// or module, filtered by --min-time, sorted by --order, cut at --top, with
// each row's heaviest stack in CSV, JSON and (--full-stacks) text.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "tests/unit/stacks/synthetic_stacks.h"
#include "tests/unit/tools/json_value.h"
#include "tests/unit/tools/tool_fixture.h"

namespace proflaunch::testing {
namespace {

using namespace format;

constexpr uint64_t kSection = 0xC0DE;
constexpr uint64_t kApp = 0x500000;
constexpr uint64_t kCudart = 0x7f1000000000;
constexpr uint64_t kCublas = 0x7f2000000000;

// ./app: train_step calls cuBLAS at line 42 and the runtime directly at
// line 43; evaluate launches at line 90. A Python program (same native
// stack as line 42) launches from model.py:7.
//
//   stack        launches (GPU ns)   allocations
//   42 (cuBLAS)  100, 100            -
//   43           50                  4096 bytes
//   90           1000                1 MiB
//   model.py:7   10                  -
class CodeTrace {
 public:
  CodeTrace() {
    trace_.process(kSection, {.pid = 7, .argv = {"./app"}});
    SyntheticStacks s(trace_, kSection);
    s.module("/work/app", kApp, kApp + 0x100000);
    s.module("/usr/local/cuda/lib64/libcudart.so.13", kCudart, kCudart + 0x100000);
    s.module("/usr/local/cuda/lib64/libcublas.so.13", kCublas, kCublas + 0x100000);
    s.symbol(kApp + 0x10, "main", "/work/app.cpp", 100);
    s.symbol(kApp + 0x20, "train_step(Model&)", "/work/app.cpp", 42);
    s.symbol(kApp + 0x24, "train_step(Model&)", "/work/app.cpp", 43);
    s.symbol(kApp + 0x30, "evaluate(Model&)", "/work/app.cpp", 90);
    s.symbol(kCublas + 0x10, "cublasSgemm_v2", "/src/cublas.cpp", 900);
    s.symbol(kCudart + 0x10, "cudaLaunchKernel", "/src/cudart.cpp", 10);
    s.native(1, {kCudart + 0x10, kCublas + 0x10, kApp + 0x20, kApp + 0x10});
    s.native(2, {kCudart + 0x10, kApp + 0x24, kApp + 0x10});
    s.native(3, {kCudart + 0x10, kApp + 0x30, kApp + 0x10});
    s.python(5, {{"/home/me/model.py", "forward", 7, true}});
    launch_api_ = trace_.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
    alloc_api_ = trace_.api(kSection, "cuMemAlloc_v2", ApiDomain::kDriver);
    launch(1, 0, 100);
    launch(1, 0, 100);
    launch(2, 0, 50);
    launch(3, 0, 1000);
    launch(1, 5, 10);
    allocate(2, 4096);
    allocate(3, 1 << 20);
    path_ = write_trace(trace_, "code.trace");
  }

  CommandOutput stats(tools::StatsCommand command) const {
    command.inputs = {path_};
    command.sections = {"code"};
    return run_stats_on(command);
  }

 private:
  void launch(uint32_t native, uint32_t python, uint64_t gpu_ns) {
    KernelLaunchRecord record{};
    record.span = {.begin_ns = next_ns(), .end_ns = next_ns(), .correlation_id = ++correlation_, .api = launch_api_};
    trace_.event(kSection, 1, record);
    stack(native, python, StackPoint::kLaunch);
    GpuActivityRecord gpu{};
    gpu.correlation_id = correlation_;
    gpu.start_ns = next_ns();
    gpu.end_ns = gpu.start_ns + gpu_ns;
    gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace_.event(kSection, 2, gpu);
  }
  void allocate(uint32_t native, uint64_t bytes) {
    MemoryOperationRecord record{};
    record.span = {.begin_ns = next_ns(), .end_ns = next_ns(), .correlation_id = ++correlation_, .api = alloc_api_};
    record.address = 0x7000000000 + correlation_ * 0x100000000;
    record.bytes = bytes;
    record.kind = static_cast<uint8_t>(AllocationKind::kDevice);
    record.action = static_cast<uint8_t>(MemoryAction::kAcquire);
    trace_.event(kSection, 1, record);
    stack(native, 0, StackPoint::kMemory);
  }
  void stack(uint32_t native, uint32_t python, StackPoint point) {
    CallStackRecord record{};
    record.point = static_cast<uint8_t>(point);
    record.correlation_id = correlation_;
    record.native_stack = native;
    record.python_stack = python;
    trace_.event(kSection, 1, record);
  }
  uint64_t next_ns() { return now_ns_ += 1000; }

  TraceBuilder trace_;
  std::string path_;
  uint16_t launch_api_ = 0, alloc_api_ = 0;
  uint64_t correlation_ = 0;
  uint64_t now_ns_ = 1'000'000'000;
};

// The code table of a --json run: its rows, in order.
std::vector<JsonValue> json_rows(const CommandOutput& out) {
  std::string error;
  const auto document = parse_json(out.out, &error);
  EXPECT_TRUE(document.has_value()) << error << "\n" << out.out;
  if (!document) return {};
  for (const JsonValue& table : (*document)["tables"].items)
    if (table["section"].str() == "code") return table["rows"].items;
  ADD_FAILURE() << "no code table\n" << out.out;
  return {};
}

std::vector<std::string> names(const std::vector<JsonValue>& rows, const std::string& column) {
  std::vector<std::string> out;
  for (const JsonValue& row : rows) out.push_back(row[column].str());
  return out;
}

tools::StatsCommand json_command() {
  tools::StatsCommand command;
  command.json = true;
  return command;
}

TEST(CodeView, EachLineGetsTheGpuTimeLaunchesAndBytesOfTheCallsMadeThere) {
  const CodeTrace trace;
  const CommandOutput out = trace.stats(json_command());
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto rows = json_rows(out);
  EXPECT_EQ(names(rows, "Line"),
            (std::vector<std::string>{"evaluate(Model&) (app.cpp:90)", "train_step(Model&) (app.cpp:42)",
                                      "train_step(Model&) (app.cpp:43)", "/home/me/model.py:7 forward"}));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["GPU Time (ns)"].as_uint(), 1000u);
  EXPECT_EQ(rows[0]["Bytes Allocated"].as_uint(), uint64_t{1} << 20);
  EXPECT_EQ(rows[0]["Allocations"].as_uint(), 1u);
  // The cuBLAS call: both launches, attributed past libcublas and libcudart.
  EXPECT_EQ(rows[1]["GPU Time (ns)"].as_uint(), 200u);
  EXPECT_EQ(rows[1]["Launches"].as_uint(), 2u);
  EXPECT_EQ(rows[1]["Avg GPU (ns)"].as_uint(), 100u);
  EXPECT_EQ(rows[2]["GPU Time (ns)"].as_uint(), 50u);
  EXPECT_EQ(rows[2]["Bytes Allocated"].as_uint(), 4096u);
  // The Python frame wins over the same native stack's.
  EXPECT_EQ(rows[3]["GPU Time (ns)"].as_uint(), 10u);
  // Each row carries its stack, root first, the library frames in it.
  const auto& stack = rows[1]["stack"].items;
  ASSERT_EQ(stack.size(), 4u);
  EXPECT_EQ(stack[0].str(), "main (app.cpp:100)");
  EXPECT_EQ(stack[2].str(), "cublasSgemm_v2 (cublas.cpp:900)");
  EXPECT_EQ(stack[3].str(), "cudaLaunchKernel (cudart.cpp:10)");
}

TEST(CodeView, ByFunctionMergesTheLinesOfAFunction) {
  const CodeTrace trace;
  tools::StatsCommand command = json_command();
  command.by = "function";
  const auto rows = json_rows(trace.stats(command));
  ASSERT_EQ(names(rows, "Function"),
            (std::vector<std::string>{"evaluate(Model&) [app]", "train_step(Model&) [app]",
                                      "/home/me/model.py forward"}));
  EXPECT_EQ(rows[1]["GPU Time (ns)"].as_uint(), 250u);
  EXPECT_EQ(rows[1]["Launches"].as_uint(), 3u);
  EXPECT_EQ(rows[1]["Bytes Allocated"].as_uint(), 4096u);
  EXPECT_EQ(rows[1]["Stacks"].as_uint(), 2u);
  // The heaviest of the two stacks is the one shown.
  EXPECT_EQ(rows[1]["stack"].items.at(1).str(), "train_step(Model&) (app.cpp:42)");
}

TEST(CodeView, ByFileAndByModule) {
  const CodeTrace trace;
  tools::StatsCommand command = json_command();
  command.by = "file";
  auto rows = json_rows(trace.stats(command));
  EXPECT_EQ(names(rows, "File"), (std::vector<std::string>{"/work/app.cpp", "/home/me/model.py"}));
  EXPECT_EQ(rows.at(0)["GPU Time (ns)"].as_uint(), 1250u);
  command.by = "module";
  rows = json_rows(trace.stats(command));
  EXPECT_EQ(names(rows, "Module"), (std::vector<std::string>{"app", "/home/me"}));
  EXPECT_EQ(rows.at(0)["Launches"].as_uint(), 4u);
}

TEST(CodeView, MinTimeLeavesOutRowsWithLessGpuTime) {
  const CodeTrace trace;
  tools::StatsCommand command = json_command();
  command.min_time = "0.06us";  // 60 ns
  const CommandOutput out = trace.stats(command);
  const auto rows = json_rows(out);
  EXPECT_EQ(names(rows, "Line"),
            (std::vector<std::string>{"evaluate(Model&) (app.cpp:90)", "train_step(Model&) (app.cpp:42)"}));
  EXPECT_NE(out.out.find("2 rows with less than 60 ns of GPU time are left out"), std::string::npos) << out.out;
}

TEST(CodeView, OrderSortsByTheChosenColumnAndTopCuts) {
  const CodeTrace trace;
  tools::StatsCommand command = json_command();
  command.order = "calls";
  EXPECT_EQ(names(json_rows(trace.stats(command)), "Line").at(0), "train_step(Model&) (app.cpp:42)");
  command.order = "bytes";
  EXPECT_EQ(names(json_rows(trace.stats(command)), "Line"),
            (std::vector<std::string>{"evaluate(Model&) (app.cpp:90)", "train_step(Model&) (app.cpp:43)",
                                      "train_step(Model&) (app.cpp:42)", "/home/me/model.py:7 forward"}));
  command.order = "name";
  const auto by_name = names(json_rows(trace.stats(command)), "Line");
  EXPECT_TRUE(std::is_sorted(by_name.begin(), by_name.end()));
  EXPECT_EQ(by_name.front(), "/home/me/model.py:7 forward");
  command.order = "gpu";
  command.top = 1;
  const CommandOutput out = trace.stats(command);
  EXPECT_EQ(names(json_rows(out), "Line"), (std::vector<std::string>{"evaluate(Model&) (app.cpp:90)"}));
  EXPECT_NE(out.out.find("4 rows; the top 1 are shown"), std::string::npos) << out.out;
}

TEST(CodeView, TextShowsTheStackUnderEachRowOnlyWithFullStacks) {
  const CodeTrace trace;
  tools::StatsCommand command;
  const CommandOutput plain = trace.stats(command);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("train_step(Model&) (app.cpp:42)"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("cublasSgemm_v2"), std::string::npos) << plain.out;
  command.full_stacks = true;
  const CommandOutput full = trace.stats(command);
  const size_t row = full.out.find("train_step(Model&) (app.cpp:42)\n");
  ASSERT_NE(row, std::string::npos) << full.out;
  EXPECT_NE(full.out.find("      main (app.cpp:100)\n      train_step(Model&) (app.cpp:42)\n      cublasSgemm_v2",
                          row),
            std::string::npos)
      << full.out;
}

TEST(CodeView, CsvCarriesTheStackInItsLastColumn) {
  const CodeTrace trace;
  tools::StatsCommand command;
  command.csv = true;
  const CommandOutput out = trace.stats(command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find(",Stacks,Line,Stack (root > leaf)\n"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find(",train_step(Model&) (app.cpp:42),main (app.cpp:100) > train_step(Model&) (app.cpp:42) "
                         "> cublasSgemm_v2 (cublas.cpp:900) > cudaLaunchKernel (cudart.cpp:10)\n"),
            std::string::npos)
      << out.out;
}

TEST(CodeView, BadOptionsAreRefusedWithAMessage) {
  const CodeTrace trace;
  tools::StatsCommand command;
  command.by = "package";
  CommandOutput out = trace.stats(command);
  EXPECT_EQ(out.exit_code, tools::kExitError);
  EXPECT_NE(out.err.find("--by 'package' is not one of line, function, file, module"), std::string::npos) << out.err;
  command = {};
  command.min_time = "5 parsecs";
  out = trace.stats(command);
  EXPECT_EQ(out.exit_code, tools::kExitError);
  EXPECT_NE(out.err.find("--min-time"), std::string::npos) << out.err;
}

TEST(CodeView, DurationsTakeUnits) {
  uint64_t ns = 0;
  EXPECT_TRUE(tools::parse_duration_ns("250", &ns));
  EXPECT_EQ(ns, 250u);
  EXPECT_TRUE(tools::parse_duration_ns("1.5ms", &ns));
  EXPECT_EQ(ns, 1'500'000u);
  EXPECT_TRUE(tools::parse_duration_ns("2s", &ns));
  EXPECT_EQ(ns, 2'000'000'000u);
  EXPECT_TRUE(tools::parse_duration_ns("3us", &ns));
  EXPECT_EQ(ns, 3000u);
  EXPECT_FALSE(tools::parse_duration_ns("-1ms", &ns));
  EXPECT_FALSE(tools::parse_duration_ns("ms", &ns));
  EXPECT_FALSE(tools::parse_duration_ns("3 ms", &ns));
}

}  // namespace
}  // namespace proflaunch::testing
