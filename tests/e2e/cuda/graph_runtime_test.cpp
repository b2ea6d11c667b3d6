// Graphs made through the runtime's graph API (graph_runtime: a graph built
// node by node with cudaGraphAdd*Node, cloned and launched three times, and
// pageable cudaMemcpyAsync captured in global mode and replayed three times),
// under the profiler with each GPU timing backend:
//  - the program prints exactly what it does untraced (its own checks of the
//    copies, the memset and the host node pass under the profiler);
//  - each of the six launches is a GraphLaunch with its GPU work: one graph
//    activity per launch with events, and with CUPTI each launch's device
//    nodes (kernels, copies, the memset) joined to the launch and to a node
//    listed when the graph was instantiated.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

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
    for (std::sregex_iterator it(line.begin(), line.end(), field), end; it != end; ++it)
      fields[(*it)[1].str()] = (*it)[2].str();
    records.push_back(std::move(fields));
  }
  return records;
}

constexpr size_t kLaunches = 6;  // three of the cloned graph, three replays of the capture

struct TracedGraphs {
  std::string out;
  std::string dump;
};

TracedGraphs run_traced(const TempDir& dir, const std::string& timing) {
  const std::string trace = dir / "x.trace";
  const ProcessResult run = testing::run_process(traced(trace, {build_path("GRAPH_RUNTIME")}, {timing}));
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult dump = run_proftrace({"dump", trace});
  EXPECT_TRUE(dump.exited_with(0)) << dump.describe();
  return {run.out, dump.out};
}

TEST(GraphRuntime, EventsTimeEveryLaunchOfBothGraphs) {
  TempDir dir;
  const ProcessResult plain = testing::run_process(untraced({build_path("GRAPH_RUNTIME")}));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  const TracedGraphs run = run_traced(dir, "--gpu-timing=events");
  EXPECT_EQ(run.out, plain.out);
  EXPECT_NE(run.out.find("graph_runtime: nodes=6 launches=3 host_calls=3 ok"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("graph_runtime: captured pageable copies nodes=3 replays=3 ok"), std::string::npos);

  EXPECT_EQ(records_of(run.dump, "GraphLaunch").size(), kLaunches) << run.dump;
  size_t timed = 0;
  for (const auto& activity : records_of(run.dump, "GpuActivity")) timed += activity.at("kind") == "graph";
  EXPECT_EQ(timed, kLaunches);
  // Both executable graphs' nodes are listed: the clone's six, the capture's three.
  std::map<std::string, int> per_type;
  for (const auto& node : records_of(run.dump, "GraphNode")) ++per_type[node.at("type")];
  EXPECT_EQ(per_type["\"kernel\""], 3) << run.dump;
  EXPECT_EQ(per_type["\"memcpy\""], 3);
  EXPECT_EQ(per_type["\"memset\""], 1);
  EXPECT_EQ(per_type["\"host\""], 1);
}

TEST(GraphRuntime, CuptiTimesEachDeviceNodeOfEveryLaunch) {
  TempDir dir;
  const TracedGraphs run = run_traced(dir, "--gpu-timing=cupti");
  std::map<std::string, std::string> node_types;
  for (const auto& node : records_of(run.dump, "GraphNode")) node_types[node.at("node")] = node.at("type");
  std::set<std::string> launches;
  for (const auto& launch : records_of(run.dump, "GraphLaunch")) launches.insert(launch.at("correlation_id"));
  ASSERT_EQ(launches.size(), kLaunches) << run.dump;
  std::map<std::string, int> per_type;
  for (const auto& activity : records_of(run.dump, "GpuActivity")) {
    if (activity.count("graph_node") == 0) continue;  // (dumped only when set)
    EXPECT_EQ(launches.count(activity.at("correlation_id")), 1u) << "joined to its graph launch";
    auto node = node_types.find(activity.at("graph_node"));
    ASSERT_NE(node, node_types.end()) << "joined to a listed node: " << activity.at("graph_node");
    ++per_type[node->second];
  }
  // Per launch of the clone: two kernels, one copy, one memset; per replay
  // of the capture: one kernel, two copies.
  EXPECT_EQ(per_type["\"kernel\""], 3 * 2 + 3 * 1) << run.dump;
  EXPECT_EQ(per_type["\"memcpy\""], 3 * 1 + 3 * 2);
  EXPECT_EQ(per_type["\"memset\""], 3);
  EXPECT_EQ(records_of(run.dump, "UnattributedGpuWork").size(), 0u);
}

}  // namespace
}  // namespace proflaunch::e2e
