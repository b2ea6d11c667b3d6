// CUDA graphs and stream capture in proftrace: a hand-built trace of one
// capture (a captured kernel launch), an instantiation with three nodes, and
// two graph launches with known GPU times. `stats` sums them per executable
// graph; `convert` draws each launch as a GPU slice with its kernels, the
// capture on the capturing thread, and no GPU slice for the captured call.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <vector>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 1'000'000'000;
constexpr uint64_t kStream = 0x5000;
constexpr uint64_t kGraph = 0x6000;
constexpr uint64_t kExec = 0x7000;
constexpr uint32_t kTid = 100;

ApiSpan span(uint16_t api, uint64_t correlation, uint64_t begin, uint64_t end, int32_t result = 0) {
  ApiSpan s{};
  s.api = api;
  s.correlation_id = correlation;
  s.begin_ns = begin;
  s.end_ns = end;
  s.result = result;
  return s;
}

void add_node(TraceBuilder& trace, GraphNodeType type, uint64_t node, uint64_t function,
              const std::vector<uint64_t>& dependencies) {
  GraphNodeRecord record{};
  record.type = static_cast<uint8_t>(type);
  record.dependency_count = static_cast<uint16_t>(dependencies.size());
  record.graph_exec = kExec;
  record.graph = kGraph;
  record.node = node;
  record.function = function;
  record.grid = {4, 1, 1};
  record.block = {128, 1, 1};
  record.device = -1;
  trace.event_with_tail(1, kTid, record,
                        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(dependencies.data()),
                                                 dependencies.size() * sizeof(uint64_t)));
}

// How the launches' GPU time comes: one activity per launch (events), or one
// per node carrying the node's handle (CUPTI).
enum class LaunchTiming { kWhole, kPerNode };

std::string graph_trace(LaunchTiming timing = LaunchTiming::kWhole) {
  TraceBuilder trace;
  TracedProcess p = add_process(trace, 1, 100, kStart);
  const uint16_t begin_api = trace.api(1, "cuStreamBeginCapture_v2", ApiDomain::kDriver);
  const uint16_t end_api = trace.api(1, "cuStreamEndCapture", ApiDomain::kDriver);
  const uint16_t instantiate_api = trace.api(1, "cuGraphInstantiateWithFlags", ApiDomain::kDriver);
  const uint16_t graph_launch_api = trace.api(1, "cuGraphLaunch", ApiDomain::kDriver);
  p.launch_api = trace.api(1, "cuLaunchKernel", ApiDomain::kDriver);
  trace.function(1, 0xA, "_Z4gemmPf", kStart);
  trace.function(1, 0xB, "relu_kernel", kStart);

  StreamCaptureRecord begin{};
  begin.span = span(begin_api, 1, kStart + 1000, kStart + 1100);
  begin.stream = kStream;
  begin.capture_id = 7;
  begin.action = static_cast<uint8_t>(CaptureAction::kBegin);
  begin.mode = 0;
  trace.event(1, kTid, begin);

  KernelLaunchRecord captured = launch(p, 2, kStart + 2000, kStart + 2100, 0xA, kStream);
  captured.span.flags |= kApiCaptured;
  trace.event(1, kTid, captured);
  CapturedNodeRecord node{};
  node.correlation_id = 2;
  node.capture_id = 7;
  node.graph = kGraph;
  node.node = 0x100;
  trace.event(1, kTid, node);

  StreamCaptureRecord end = begin;
  end.span = span(end_api, 3, kStart + 3000, kStart + 3100);
  end.action = static_cast<uint8_t>(CaptureAction::kEnd);
  end.mode = kCaptureModeUnknown;
  end.graph = kGraph;
  trace.event(1, kTid, end);

  add_node(trace, GraphNodeType::kKernel, 0x100, 0xA, {});
  add_node(trace, GraphNodeType::kMemcpy, 0x101, 0, {0x100});
  add_node(trace, GraphNodeType::kKernel, 0x102, 0xB, {0x100, 0x101});
  GraphExecRecord instantiate{};
  instantiate.span = span(instantiate_api, 4, kStart + 4000, kStart + 4500);
  instantiate.graph_exec = kExec;
  instantiate.graph = kGraph;
  instantiate.node_count = 3;
  instantiate.action = static_cast<uint8_t>(GraphExecAction::kInstantiate);
  trace.event(1, kTid, instantiate);

  // Two launches: 1000 and 3000 ns of GPU time.
  const uint64_t durations[] = {1000, 3000};
  for (uint64_t i = 0; i < 2; ++i) {
    GraphLaunchRecord graph_launch{};
    graph_launch.span = span(graph_launch_api, 10 + i, kStart + 10000 + i * 10000, kStart + 10200 + i * 10000);
    graph_launch.graph_exec = kExec;
    graph_launch.stream = kStream;
    trace.event(1, kTid, graph_launch);
    const uint64_t start = kStart + 10300 + i * 10000;
    if (timing == LaunchTiming::kWhole) {
      trace.event(1, kTid, activity(10 + i, start, start + durations[i], kStream, GpuActivityKind::kGraph));
      continue;
    }
    // gemm 400 ns, the copy 100 ns, relu the rest: the same spans as above.
    struct Node {
      uint64_t node, from, to;
      GpuActivityKind kind;
    };
    for (const Node& n : {Node{0x100, 0, 400, GpuActivityKind::kKernel}, Node{0x101, 400, 500, GpuActivityKind::kMemoryCopy},
                          Node{0x102, 500, durations[i], GpuActivityKind::kKernel}}) {
      GpuActivityRecord record = activity(10 + i, start + n.from, start + n.to, kStream, n.kind);
      record.source = static_cast<uint8_t>(GpuTimingSource::kCupti);
      record.graph_node = n.node;
      trace.event(1, kTid, record);
    }
  }
  return write_trace(trace, timing == LaunchTiming::kWhole ? "graphs.trace" : "graphs-per-node.trace");
}

std::vector<std::vector<std::string>> csv_rows(const std::string& out, const std::string& title) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(out);
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.rfind("# ", 0) == 0) {
      inside = line.find(title) != std::string::npos;
      std::getline(lines, line);
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

TEST(Graphs, StatsSumGpuTimePerExecutableGraph) {
  tools::StatsCommand command;
  command.inputs = {graph_trace()};
  command.csv = true;
  const CommandOutput result = run_stats_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto rows = csv_rows(result.out, "CUDA graphs");
  ASSERT_EQ(rows.size(), 1u) << result.out;
  EXPECT_EQ(rows[0][1], "4000");  // total GPU time
  EXPECT_EQ(rows[0][2], "2");     // launches
  EXPECT_EQ(rows[0][3], "2000");  // average
  EXPECT_EQ(rows[0][4], "3");     // nodes
  EXPECT_EQ(rows[0][5], "2");     // kernels
  EXPECT_EQ(rows[0][6], "0x7000");
  // The captured launch never ran: not a kernel instance.
  EXPECT_TRUE(csv_rows(result.out, "GPU kernels").empty()) << result.out;

  command.csv = false;  // the notes under the tables
  const CommandOutput text = run_stats_on(command);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("1 stream captures ended with a graph, 0 failed; 1 calls captured"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("nodes by type: kernel 2, memcpy 1"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("launches without GPU time"), std::string::npos) << text.out;
}

// CUPTI times a launch node by node: each kernel node is a kernel instance
// under its own name and shape, and the launch lasts from its first node's
// start to its last node's end. (Before, such launches counted as untimed and
// their kernels were missing from gpu-kernels: an H200 run showed it.)
TEST(Graphs, StatsNameAndTimeEachKernelOfLaunchesTimedNodeByNode) {
  tools::StatsCommand command;
  command.inputs = {graph_trace(LaunchTiming::kPerNode)};
  command.csv = true;
  const CommandOutput result = run_stats_on(command);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto graphs = csv_rows(result.out, "CUDA graphs");
  ASSERT_EQ(graphs.size(), 1u) << result.out;
  EXPECT_EQ(graphs[0][1], "4000");  // 1000 + 3000: each launch's span over its nodes
  EXPECT_EQ(graphs[0][2], "2");
  EXPECT_EQ(graphs[0][3], "2000");
  const auto kernels = csv_rows(result.out, "GPU kernels");
  ASSERT_EQ(kernels.size(), 2u) << result.out;
  // relu: 500 + 2500 ns; gemm: 2 x 400 ns. The columns: total, instances, ..., grid, block, ..., name.
  EXPECT_EQ(kernels[0][1], "3000");
  EXPECT_EQ(kernels[0][2], "2");
  EXPECT_EQ(kernels[0][7], "4x1x1");
  EXPECT_EQ(kernels[0][8], "128x1x1");
  EXPECT_EQ(kernels[0].back(), "relu_kernel");
  EXPECT_EQ(kernels[1][1], "800");
  EXPECT_EQ(kernels[1][2], "2");
  EXPECT_EQ(kernels[1].back(), "gemm(float*)");

  command.csv = false;
  const CommandOutput text = run_stats_on(command);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("launches without GPU time"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("are not counted"), std::string::npos) << text.out;
}

TEST(Graphs, ConvertDrawsLaunchesCapturesAndCapturedCalls) {
  const ConvertedTrace converted = convert_files({graph_trace()});
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  const auto graph_slices = converted.with_phase('X', "gpu.graph");
  ASSERT_EQ(graph_slices.size(), 2u) << converted.json_text;
  for (const JsonValue* slice : graph_slices) {
    EXPECT_NE((*slice)["name"].str().find("Graph 0x7000 (2 kernels)"), std::string::npos);
    const JsonValue& names = (*slice)["args"]["kernel_names"];
    ASSERT_EQ(names.items.size(), 2u);
    EXPECT_EQ(names.items[0].str(), "gemm(float*)");
    EXPECT_EQ(names.items[1].str(), "relu_kernel");
    EXPECT_TRUE((*slice)["args"].has("bind_id") || slice->has("bind_id"));
  }
  EXPECT_EQ((*graph_slices[1])["dur"].as_double(), 3.0);  // 3000 ns
  // No GPU slice for the captured launch; its call says it was captured.
  EXPECT_TRUE(converted.with_phase('X', "kernel").empty());
  const JsonValue* captured = nullptr;
  for (const JsonValue* e : converted.with_phase('X'))
    if ((*e)["args"].has("captured")) captured = e;
  ASSERT_NE(captured, nullptr);
  EXPECT_EQ((*captured)["args"]["kernel"].str(), "gemm(float*)");
  // The capture, on the capturing thread, contains the captured call.
  const JsonValue* capture = converted.slice_named("Stream capture");
  ASSERT_NE(capture, nullptr) << converted.json_text;
  EXPECT_EQ((*capture)["tid"].as_uint(), (*captured)["tid"].as_uint());
  EXPECT_LE((*capture)["ts"].as_double(), (*captured)["ts"].as_double());
  EXPECT_GE((*capture)["ts"].as_double() + (*capture)["dur"].as_double(),
            (*captured)["ts"].as_double() + (*captured)["dur"].as_double());
  EXPECT_EQ((*capture)["args"]["mode"].str(), "global");
  EXPECT_EQ((*capture)["args"]["result"].str(), "graph 0x6000");
  std::string checker_output;
  EXPECT_EQ(run_checker(converted.json_path, &checker_output), 0) << checker_output;
}

}  // namespace
}  // namespace proflaunch::testing
