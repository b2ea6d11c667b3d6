// CUDA graphs under the profiler (graph_training: warm-up, one captured
// training step, replays with fresh inputs), in each capture mode, with GPU
// timing and call stacks on:
//  - the program prints and returns exactly what it does untraced;
//  - no capture is invalidated by the profiler - including while eager work
//    runs on another stream during a long capture, where the writer thread's
//    event queries would invalidate a global-mode capture if it were not in
//    relaxed mode (--capture-pause-ms);
//  - each replay is one GraphLaunch with one graph-kind GPU activity on the
//    launch stream; the captured calls are flagged captured, have no GPU
//    activity of their own, and each names the node it became, which the
//    instantiation lists (kernel nodes with their functions);
//  - proftrace stats sums the replays per executable graph, and convert draws
//    each captured kernel with its name and the stack of the line that
//    captured it;
//  - a program that invalidates its own capture gets the same errors traced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

// `proftrace dump` lines of one kind, as field -> value maps.
std::vector<std::map<std::string, std::string>> records_of(const std::string& dump, const std::string& kind) {
  std::vector<std::map<std::string, std::string>> records;
  std::istringstream lines(dump);
  std::string line;
  const std::regex field(R"(([a-z_]+)=("[^"]*"|\S+))");
  while (std::getline(lines, line)) {
    if (line.rfind(kind + " ", 0) != 0) continue;
    std::map<std::string, std::string> fields;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), field); it != std::sregex_iterator(); ++it)
      fields[(*it)[1]] = (*it)[2];
    records.push_back(std::move(fields));
  }
  return records;
}

uint64_t number(const std::string& text) { return std::stoull(text, nullptr, 0); }

struct GraphRun {
  ProcessResult untraced;
  ProcessResult traced;
  std::string dump;
  std::string trace;
};

GraphRun run_both(TempDir& dir, const std::vector<std::string>& args) {
  std::vector<std::string> program = {build_path("GRAPH_TRAINING")};
  program.insert(program.end(), args.begin(), args.end());
  GraphRun run;
  run.untraced = testing::run_process(untraced(program));
  run.trace = dir / "x.trace";
  run.traced = testing::run_process(traced(run.trace, program, {"--stacks=all", "--gpu-timing=events"}));
  const ProcessResult dump = run_proftrace({"dump", run.trace});
  EXPECT_TRUE(dump.exited_with(0)) << dump.describe();
  run.dump = dump.out;
  return run;
}

class GraphCapture : public ::testing::TestWithParam<std::string> {};

TEST_P(GraphCapture, ReplaysAreTracedAndTheCaptureIsUndisturbed) {
  TempDir dir;
  // A 200 ms pause inside the capture with eager work in flight: the
  // writer thread resolves that work's events while the capture is open.
  const GraphRun run = run_both(dir, {"--capture-mode", GetParam(), "--replays", "4", "--capture-pause-ms", "200"});
  ASSERT_TRUE(run.untraced.exited_with(0)) << run.untraced.describe();
  ASSERT_TRUE(run.traced.exited_with(0)) << "the profiler broke the capture\n" << run.traced.describe();
  EXPECT_EQ(run.traced.out, run.untraced.out);
  EXPECT_NE(run.traced.out.find("replays=4"), std::string::npos) << run.traced.out;

  // Capture begin and end, the end with the graph.
  const auto captures = records_of(run.dump, "StreamCapture");
  ASSERT_EQ(captures.size(), 2u) << run.dump;
  EXPECT_EQ(captures[0].at("action"), "begin");
  EXPECT_EQ(captures[1].at("action"), "end");
  EXPECT_EQ(captures[1].at("result"), "0");
  const std::string graph = captures[1].at("graph");
  EXPECT_NE(number(graph), 0u);
  const std::string capture_stream = captures[0].at("stream");

  // The captured calls: flagged, on the capture stream, each with its node.
  std::set<uint64_t> captured_correlations;
  for (const char* kind : {"KernelLaunch", "MemoryCopy"}) {
    for (const auto& call : records_of(run.dump, kind)) {
      if ((number(call.at("flags")) & format::kApiCaptured) == 0) continue;
      EXPECT_EQ(call.at("stream"), capture_stream);
      captured_correlations.insert(number(call.at("correlation_id")));
    }
  }
  EXPECT_EQ(captured_correlations.size(), 5u) << "the copy, the GEMM and three elementwise/optimizer kernels";
  // The activation's cudaMallocAsync and cudaFreeAsync: captured too.
  for (const auto& operation : records_of(run.dump, "MemoryOperation")) {
    if ((number(operation.at("flags")) & format::kApiCaptured) == 0) continue;
    EXPECT_EQ(operation.at("stream"), capture_stream);
    captured_correlations.insert(number(operation.at("correlation_id")));
  }
  EXPECT_EQ(captured_correlations.size(), 7u);
  std::set<uint64_t> captured_nodes;
  for (const auto& node : records_of(run.dump, "CapturedNode")) {
    if (!captured_correlations.count(number(node.at("correlation_id")))) continue;
    EXPECT_EQ(node.at("graph"), graph);
    EXPECT_NE(number(node.at("node")), 0u);
    captured_nodes.insert(number(node.at("node")));
  }
  EXPECT_EQ(captured_nodes.size(), 7u) << "every captured call names its own node";
  for (const auto& activity : records_of(run.dump, "GpuActivity"))
    EXPECT_FALSE(captured_correlations.count(number(activity.at("correlation_id"))))
        << "captured work did not run when captured";

  // The instantiation lists exactly those nodes, the kernels with functions.
  std::set<uint64_t> listed;
  std::map<std::string, size_t> types;
  for (const auto& node : records_of(run.dump, "GraphNode")) {
    EXPECT_EQ(node.at("graph"), graph);
    listed.insert(number(node.at("node")));
    ++types[node.at("type")];
    if (node.at("type") == "\"kernel\"") EXPECT_NE(number(node.at("function")), 0u);
    if (node.at("type") == "\"mem alloc\"") {
      EXPECT_EQ(node.at("bytes"), std::to_string(512 * 64 * sizeof(float)));
      EXPECT_NE(number(node.at("address")), 0u);
    }
  }
  EXPECT_EQ(listed, captured_nodes);
  EXPECT_EQ(types["\"kernel\""], 4u);
  EXPECT_EQ(types["\"memcpy\""], 1u);
  EXPECT_EQ(types["\"mem alloc\""], 1u);
  EXPECT_EQ(types["\"mem free\""], 1u);

  // Each replay: a launch on the capture stream, timed as one unit.
  const auto launches = records_of(run.dump, "GraphLaunch");
  ASSERT_EQ(launches.size(), 4u);
  std::map<uint64_t, std::string> launch_streams;
  for (const auto& launch : launches) {
    EXPECT_EQ(launch.at("result"), "0");
    EXPECT_EQ(launch.at("stream"), capture_stream);
    launch_streams[number(launch.at("correlation_id"))] = launch.at("stream");
  }
  size_t timed = 0;
  for (const auto& activity : records_of(run.dump, "GpuActivity")) {
    if (activity.at("kind") != "graph") continue;
    ++timed;
    const auto found = launch_streams.find(number(activity.at("correlation_id")));
    ASSERT_NE(found, launch_streams.end());
    // The replay's kernels take 730 us as modelled (500 + 20 + 10 + 200), plus the copy.
    EXPECT_GE(number(activity.at("dur_ns")), 730'000u);
  }
  EXPECT_EQ(timed, 4u);
  EXPECT_EQ(run.dump.find("LOST"), std::string::npos) << "nothing was lost";

  // stats: one executable graph, four launches, seven nodes, four kernels.
  const ProcessResult stats = run_proftrace({"stats", "--section", "graphs", "--csv", run.trace});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  const std::regex row(R"((?:^|\n)[0-9.]+,([0-9]+),4,[0-9]+,7,4,0x[0-9a-f]+,[^\n]*graph_training\.cpp)");
  EXPECT_TRUE(std::regex_search(stats.out, row)) << stats.out;

  // convert: captured kernels carry their names and the capturing line.
  const std::string json = dir / "x.json";
  const ProcessResult convert = run_proftrace({"convert", run.trace, "-o", json});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  PerfettoJson document;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json, &document, &error)) << error;
  size_t captured_slices = 0;
  for (const auto* slice : document.slices()) {
    const auto* args = slice->find("args");
    if (args == nullptr || !args->has("captured")) continue;
    ++captured_slices;
    if (args->has("kernel")) {
      EXPECT_FALSE((*args)["kernel"].str().empty());
      ASSERT_TRUE(args->has("stack"));
      EXPECT_NE((*args)["stack"].str().find("graph_training.cpp"), std::string::npos) << (*args)["stack"].str();
    }
  }
  EXPECT_EQ(captured_slices, 7u);
  EXPECT_EQ(document.slices("gpu.graph").size(), 4u);
}

INSTANTIATE_TEST_SUITE_P(Modes, GraphCapture, ::testing::Values("global", "thread_local", "relaxed"));

TEST(GraphCaptureThreads, TwoThreadsCaptureAndReplayAtOnce) {
  TempDir dir;
  const GraphRun run = run_both(dir, {"--threads", "2", "--capture-mode", "thread_local", "--replays", "3"});
  ASSERT_TRUE(run.untraced.exited_with(0)) << run.untraced.describe();
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  EXPECT_EQ(run.traced.out, run.untraced.out);
  EXPECT_EQ(records_of(run.dump, "GraphLaunch").size(), 6u);
  std::set<std::string> execs, threads;
  for (const auto& launch : records_of(run.dump, "GraphLaunch")) {
    execs.insert(launch.at("graph_exec"));
    threads.insert(launch.at("tid"));
  }
  EXPECT_EQ(execs.size(), 2u);
  EXPECT_EQ(threads.size(), 2u);
}

TEST(GraphCaptureErrors, AProgramsOwnInvalidationGetsTheSameErrors) {
  TempDir dir;
  const GraphRun run = run_both(dir, {"--invalidate", "1"});
  ASSERT_TRUE(run.untraced.exited_with(0)) << run.untraced.describe();
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  EXPECT_EQ(run.traced.out, run.untraced.out);
  EXPECT_NE(run.traced.out.find("synchronize cudaErrorStreamCaptureUnsupported, end capture "
                                "cudaErrorStreamCaptureInvalidated"),
            std::string::npos)
      << run.traced.out;
  // The failed end is in the trace with its error and no graph.
  const auto captures = records_of(run.dump, "StreamCapture");
  ASSERT_EQ(captures.size(), 2u);
  EXPECT_NE(captures[1].at("result"), "0");
  EXPECT_EQ(number(captures[1].at("graph")), 0u);
}

}  // namespace
}  // namespace proflaunch::e2e

namespace proflaunch::e2e {
namespace {

// A graph built node by node (driver API): every node is listed at
// instantiation with its type and dependencies, the child graph's kernel
// under the child graph, the update and destruction are recorded, and each
// launch is timed; the converter names the graph's kernels.
TEST(GraphNodesBuiltByHand, EveryNodeIsListedAndEveryLaunchTimed) {
  TempDir dir;
  const std::string trace = dir / "x.trace";
  const ProcessResult plain = testing::run_process(untraced({build_path("GRAPH_NODES")}));
  // Events time a graph launch as one unit (CUPTI: the test below).
  const ProcessResult run = testing::run_process(traced(trace, {build_path("GRAPH_NODES")}, {"--gpu-timing=events"}));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, plain.out);
  EXPECT_NE(run.out.find("host_calls=4 memset=0x3"), std::string::npos) << run.out;
  const ProcessResult dump = run_proftrace({"dump", trace});
  ASSERT_TRUE(dump.exited_with(0)) << dump.describe();

  const auto nodes = records_of(dump.out, "GraphNode");
  ASSERT_EQ(nodes.size(), 5u) << dump.out;
  std::map<std::string, std::map<std::string, std::string>> by_node;
  std::vector<std::string> types;
  for (const auto& node : nodes) {
    by_node[node.at("node")] = node;
    types.push_back(node.at("type"));
  }
  EXPECT_EQ(types, (std::vector<std::string>{"\"memset\"", "\"kernel\"", "\"host\"", "\"child graph\"", "\"kernel\""}));
  EXPECT_EQ(nodes[0].at("bytes"), "65536");
  EXPECT_EQ(nodes[1].at("dependencies"), "[" + nodes[0].at("node") + "]");
  EXPECT_EQ(nodes[2].at("dependencies"), "[" + nodes[1].at("node") + "]");
  EXPECT_EQ(nodes[3].at("dependencies"), "[" + nodes[2].at("node") + "]");
  EXPECT_EQ(nodes[4].at("graph"), nodes[3].at("function")) << "the child's kernel is listed under the child graph";
  EXPECT_EQ(nodes[1].at("grid"), "8x1x1");

  std::vector<std::string> actions;
  for (const auto& exec : records_of(dump.out, "GraphExec")) actions.push_back(exec.at("action"));
  EXPECT_EQ(actions, (std::vector<std::string>{"\"instantiate\"", "\"update\"", "\"destroy\"", "\"graph destroy\"",
                                               "\"graph destroy\""}));
  size_t timed = 0;
  for (const auto& activity : records_of(dump.out, "GpuActivity")) timed += activity.at("kind") == "graph";
  EXPECT_EQ(timed, 4u);
  EXPECT_EQ(records_of(dump.out, "GraphLaunch").size(), 4u);

  const std::string json = dir / "x.json";
  ASSERT_TRUE(run_proftrace({"convert", trace, "-o", json}).exited_with(0));
  PerfettoJson document;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json, &document, &error)) << error;
  const auto graphs = document.slices("gpu.graph");
  ASSERT_EQ(graphs.size(), 4u);
  const auto& names = (*graphs[0])["args"]["kernel_names"];
  ASSERT_EQ(names.items.size(), 2u);
  EXPECT_EQ(names.items[0].str(), "graph_node_kernel");
  EXPECT_EQ(names.items[1].str(), "graph_child_kernel");
}

// With CUPTI, each launch's device nodes (the memset, the kernel, the child
// graph's kernel: CUPTI has no record of host nodes) carry their own GPU
// time, joined to the launch's call and to the node listed at instantiation.
TEST(GraphNodesBuiltByHand, CuptiTimesEachDeviceNodeOfEveryLaunch) {
  TempDir dir;
  const std::string trace = dir / "x.trace";
  const ProcessResult run = testing::run_process(traced(trace, {build_path("GRAPH_NODES")}, {"--gpu-timing=cupti"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult dump = run_proftrace({"dump", trace});
  ASSERT_TRUE(dump.exited_with(0)) << dump.describe();
  std::map<std::string, std::string> node_types;
  for (const auto& node : records_of(dump.out, "GraphNode")) node_types[node.at("node")] = node.at("type");
  std::set<std::string> launches;
  for (const auto& launch : records_of(dump.out, "GraphLaunch")) launches.insert(launch.at("correlation_id"));
  ASSERT_EQ(launches.size(), 4u);
  std::map<std::string, int> per_type;
  for (const auto& activity : records_of(dump.out, "GpuActivity")) {
    if (activity.count("graph_node") == 0) continue;  // (dumped only when set)
    EXPECT_EQ(activity.at("source"), "2") << "GpuTimingSource::kCupti";
    EXPECT_EQ(launches.count(activity.at("correlation_id")), 1u) << "joined to its graph launch";
    auto node = node_types.find(activity.at("graph_node"));
    ASSERT_NE(node, node_types.end()) << "joined to a listed node: " << activity.at("graph_node");
    ++per_type[node->second];
  }
  EXPECT_EQ(per_type["\"memset\""], 4);
  EXPECT_EQ(per_type["\"kernel\""], 8) << "the graph's and the child graph's kernel, per launch";
  EXPECT_EQ(records_of(dump.out, "UnattributedGpuWork").size(), 0u);
}

// Replays of a captured graph under CUPTI, drawn node by node: each node a
// slice named by its kernel on the stream (with the launch's correlation id
// and its node), each replay a slice on the stream's "graph replays" track
// from its first node's start to its last node's end, with the flow from
// its cuGraphLaunch; nothing drawn as work whose call is not in the trace.
// `shape`: two nodes of one kernel, or a fork and a join (three kernels).
void expect_replays_drawn_node_by_node(const std::string& shape, const std::set<std::string>& kernels,
                                       size_t nodes_per_replay) {
  TempDir dir;
  const std::string trace = dir / "x.trace";
  const ProcessResult run = testing::run_process(
      traced(trace, {build_path("GRAPH_REPLAYS"), "--shape", shape, "--replays", "10"}, {"--gpu-timing=cupti"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const std::string json = dir / "x.json";
  const ProcessResult convert = run_proftrace({"convert", trace, "-o", json});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  PerfettoJson document;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(json, &document, &error)) << error;

  auto ns = [](const JsonValue& value) { return static_cast<int64_t>(std::llround(value.as_double() * 1000)); };
  std::map<uint64_t, uint64_t> launch_flows;  // cuGraphLaunch correlation -> its flow id
  for (const JsonValue* slice : document.slices())
    if ((*slice)["name"].str() == "cuGraphLaunch" && slice->has("bind_id"))
      launch_flows[(*slice)["args"]["correlation"].as_uint()] = (*slice)["bind_id"].as_uint();
  ASSERT_EQ(launch_flows.size(), 10u) << "every launch has an arrow to its replay";

  struct Span {
    int64_t start = INT64_MAX, end = INT64_MIN;
    size_t nodes = 0;
  };
  std::map<uint64_t, Span> nodes;  // by correlation
  std::map<std::string, int> per_kernel;
  for (const JsonValue* slice : document.slices("kernel")) {
    const std::string track = document.thread_names.at({static_cast<uint32_t>((*slice)["pid"].as_uint()),
                                                        static_cast<uint32_t>((*slice)["tid"].as_uint())});
    EXPECT_EQ(track.find("graph replays"), std::string::npos) << "a node on the replays' track";
    EXPECT_EQ((*slice)["name"].str().find("not in the trace"), std::string::npos) << (*slice)["name"].str();
    const JsonValue& args = (*slice)["args"];
    ASSERT_TRUE(args.has("graph_node")) << "a node slice says which node";
    const uint64_t correlation = args["correlation"].as_uint();
    EXPECT_EQ(launch_flows.count(correlation), 1u) << "a node of a launch: " << correlation;
    ++per_kernel[(*slice)["name"].str()];
    Span& span = nodes[correlation];
    // As measured: a start moved to keep the stream's slices nested says by how much.
    const int64_t moved = args.has("start_adjusted_ns") ? args["start_adjusted_ns"].as_int() : 0;
    span.start = std::min(span.start, ns((*slice)["ts"]) - moved);
    span.end = std::max(span.end, ns((*slice)["ts"]) + ns((*slice)["dur"]));
    ++span.nodes;
  }
  EXPECT_EQ(nodes.size(), 10u);
  for (const auto& [correlation, span] : nodes) EXPECT_EQ(span.nodes, nodes_per_replay) << correlation;
  std::set<std::string> names;
  for (const auto& [name, count] : per_kernel) names.insert(name);
  EXPECT_EQ(names, kernels);

  size_t replays = 0;
  for (const JsonValue* slice : document.slices("gpu.graph")) {
    ++replays;
    const std::string track = document.thread_names.at({static_cast<uint32_t>((*slice)["pid"].as_uint()),
                                                        static_cast<uint32_t>((*slice)["tid"].as_uint())});
    EXPECT_NE(track.find("graph replays"), std::string::npos) << track;
    const uint64_t correlation = (*slice)["args"]["correlation"].as_uint();
    ASSERT_EQ(nodes.count(correlation), 1u);
    const JsonValue& args = (*slice)["args"];
    const int64_t moved = args.has("start_adjusted_ns") ? args["start_adjusted_ns"].as_int() : 0;
    EXPECT_EQ(ns((*slice)["ts"]) - moved, nodes[correlation].start) << "from its first node's start";
    EXPECT_EQ(ns((*slice)["ts"]) + ns((*slice)["dur"]), nodes[correlation].end) << "to its last node's end";
    ASSERT_TRUE(slice->has("bind_id"));
    EXPECT_EQ((*slice)["bind_id"].as_uint(), launch_flows[correlation]) << "the arrow from its cuGraphLaunch";
  }
  EXPECT_EQ(replays, 10u);
}

TEST(GraphReplaysUnderCupti, TwoNodesOfOneKernelAreTwentyNamedNodeSlices) {
  expect_replays_drawn_node_by_node("same", {"replay_step"}, 2);
}

TEST(GraphReplaysUnderCupti, BranchesAreDrawnNodeByNode) {
  expect_replays_drawn_node_by_node("branches", {"replay_left", "replay_right", "replay_join"}, 3);
}

}  // namespace
}  // namespace proflaunch::e2e
