// Multi-rank traces built by hand, whose numbers are known: host clock
// alignment (REALTIME snapshots, then collective ends), the merged Perfetto
// JSON of ranks on two hosts, and the NCCL stats (wait, straggler,
// bandwidths, compute/communication overlap).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "tools/proftrace/interpret/clock_alignment.h"
#include "tools/proftrace/interpret/interpreter.h"
#include "tools/proftrace/stats/collective_analysis.h"
#include "tools/proftrace/interpret/trace_model.h"
#include "tests/unit/tools/json_value.h"
#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;
using namespace proflaunch::tools;

constexpr uint64_t kCommId = 0xC0FFEE;
constexpr uint64_t kStream = 0x5000;
constexpr uint64_t kKernel = 0xF00;

struct Rank {
  uint64_t section;
  uint16_t allreduce_api, launch_api;
};

// A rank process: RANK set, its own host and wall-clock offset.
Rank add_rank(TraceBuilder& trace, uint64_t section, int32_t rank, const std::string& host,
              uint64_t monotonic_ns, uint64_t realtime_ns) {
  ProcessSpec spec;
  spec.pid = 4242;  // the same pid on both hosts: a real multi-host clash
  spec.host = host;
  spec.argv = {"python", "train.py"};
  spec.rank = rank;
  spec.world_size = 2;
  spec.monotonic_ns = monotonic_ns;
  spec.realtime_ns = realtime_ns;
  trace.process(section, spec);
  trace.function(section, kKernel, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  return Rank{section, trace.api(section, "ncclAllReduce", ApiDomain::kCollective),
              trace.api(section, "cuLaunchKernel", ApiDomain::kDriver)};
}

// One all-reduce on `rank`: the call, the launch inside it (same correlation
// id), and the kernel's GPU interval [gpu_start, gpu_end] in local time.
void add_allreduce(TraceBuilder& trace, const Rank& r, int32_t rank, int32_t nranks, uint64_t sequence,
                   uint64_t correlation, uint64_t call_ns, uint64_t gpu_start, uint64_t gpu_end,
                   uint64_t bytes = 1'000'000) {
  KernelLaunchRecord launch{};
  launch.device = 0;
  launch.span = {.begin_ns = call_ns + 10, .end_ns = call_ns + 20, .correlation_id = correlation, .api = r.launch_api};
  launch.function = kKernel;
  launch.stream = kStream;
  launch.grid = {2, 1, 1};
  launch.block = {512, 1, 1};
  trace.event(r.section, 1, launch);
  CollectiveRecord call{};
  call.span = {.begin_ns = call_ns, .end_ns = call_ns + 30, .correlation_id = correlation, .api = r.allreduce_api,
               .flags = kApiAsync};
  call.comm = 0xABC;
  call.comm_id = kCommId;
  call.sequence = sequence;
  call.count = bytes / 4;
  call.bytes = bytes;
  call.stream = kStream;
  call.root = -1;
  call.rank = rank;
  call.nranks = nranks;
  call.op = static_cast<uint8_t>(CollectiveOp::kAllReduce);
  call.datatype = 7;
  call.reduction = 0;
  trace.event(r.section, 1, call);
  trace.event(r.section, 2, activity(correlation, gpu_start, gpu_end, kStream, GpuActivityKind::kKernel));
}

TEST(HostClockOffsets, WallClocksThenCollectiveEndsAlignASecondHost) {
  // Host B's monotonic clock is 5 s behind A's (B + 5 s = A); its wall clock
  // is 3 ms off, so the snapshots alone say 5.003 s.
  constexpr int64_t kTrueOffset = 5'000'000'000;
  TraceBuilder trace;
  add_rank(trace, 0xA, 0, "node-a", 100'000'000'000, 1'700'000'000'000'000'000);
  add_rank(trace, 0xB, 1, "node-b", 100'000'000'000 - kTrueOffset,
           1'700'000'000'000'000'000 + 3'000'000);
  TraceModel model;
  std::vector<InputTrace> inputs;
  std::string error;
  ASSERT_TRUE(open_inputs({write_trace(trace, "offsets.trace")}, &inputs, &error)) << error;
  load_definitions(inputs, model);
  HostClockOffsets offsets = HostClockOffsets::from_snapshots(model);
  EXPECT_EQ(offsets.reference_host(), "node-a");
  EXPECT_EQ(offsets.offset_ns("node-a"), 0);
  EXPECT_EQ(offsets.offset_ns("node-b"), kTrueOffset + 3'000'000);

  // Ends of three all-reduces, B's with a little jitter around the truth.
  std::vector<CollectiveEndSample> samples;
  const int64_t jitter[] = {-200, 0, 300};
  for (int i = 0; i < 3; ++i) {
    const int64_t end_a = 200'000'000'000 + i * 1'000'000;
    samples.push_back({"node-a", kCommId, uint64_t(i + 1), end_a});
    samples.push_back({"node-b", kCommId, uint64_t(i + 1), end_a - kTrueOffset + jitter[i]});
  }
  offsets.refine_with_collective_ends(samples);
  EXPECT_EQ(offsets.offset_ns("node-a"), 0);
  EXPECT_EQ(offsets.offset_ns("node-b"), kTrueOffset);  // the median sample is the exact one
  EXPECT_EQ(offsets.refinement_samples("node-b"), 3u);
}

// Two ranks on two hosts in two files, as `proftrace convert a b` gets them.
std::vector<std::string> two_host_files() {
  constexpr int64_t kTrueOffset = 5'000'000'000;
  constexpr uint64_t kA = 100'000'000'000;
  TraceBuilder a, b;
  const Rank ra = add_rank(a, 0xA, 0, "node-a", kA, 1'700'000'000'000'000'000);
  const Rank rb = add_rank(b, 0xB, 1, "node-b", kA - kTrueOffset, 1'700'000'000'000'000'000 + 3'000'000);
  for (uint64_t i = 0; i < 3; ++i) {
    const uint64_t t = kA + 1'000'000 + i * 1'000'000;  // host A time
    // Rank 1 is late by 200 us each time; both end together.
    add_allreduce(a, ra, 0, 2, i + 1, 100 + i, t, t + 1'000, t + 300'000);
    add_allreduce(b, rb, 1, 2, i + 1, 200 + i, t + 200'000 - kTrueOffset, t + 201'000 - kTrueOffset,
                  t + 300'000 - kTrueOffset);
  }
  return {write_trace(a, "rank0.trace"), write_trace(b, "rank1.trace")};
}

TEST(MultiRankConvert, RanksOfTwoHostsShareOneTimelineWithCollectiveEndsAligned) {
  const ConvertedTrace converted = convert_files(two_host_files());
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  std::map<std::string, std::map<std::string, double>> kernel_end_us;  // collective -> process -> end
  for (const JsonValue* slice : converted.with_phase('X', "kernel")) {
    const JsonValue* collective = (*slice)["args"].find("collective");
    ASSERT_NE(collective, nullptr) << "a collective's kernel slice names its instance";
    const std::string gpu = converted.process_name((*slice)["pid"].as_uint());
    const std::string process = std::to_string((*slice)["args"]["pid"].as_uint()) + "@" + gpu;
    kernel_end_us[collective->str()][process] = (*slice)["ts"].as_double() + (*slice)["dur"].as_double();
  }
  ASSERT_EQ(kernel_end_us.size(), 3u);
  for (const auto& [instance, ends] : kernel_end_us) {
    ASSERT_EQ(ends.size(), 2u) << instance << ": both ranks' kernels, on their own hosts' GPUs";
    // Stated tolerance: 1 us (the ends agree exactly after refinement; the
    // wall clocks alone would leave 3 ms).
    EXPECT_NEAR(ends.begin()->second, ends.rbegin()->second, 1.0) << instance;
  }
  // Processes are named and sorted by rank; the second host's pid is remapped.
  std::map<int64_t, std::string> by_sort_index;
  std::map<uint64_t, std::string> names;
  for (const JsonValue* meta : converted.with_phase('M')) {
    if ((*meta)["name"].str() == "process_name") names[(*meta)["pid"].as_uint()] = (*meta)["args"]["name"].str();
  }
  for (const JsonValue* meta : converted.with_phase('M')) {
    if ((*meta)["name"].str() != "process_sort_index") continue;
    const std::string& name = names[(*meta)["pid"].as_uint()];
    if (name.rfind("[rank", 0) == 0) by_sort_index[(*meta)["args"]["sort_index"].as_int()] = name;
  }
  ASSERT_EQ(by_sort_index.size(), 2u);
  EXPECT_EQ(by_sort_index.begin()->second.rfind("[rank 0]", 0), 0u);
  EXPECT_EQ(by_sort_index.rbegin()->second.rfind("[rank 1]", 0), 0u);
  std::string output;
  EXPECT_EQ(run_checker(converted.json_path, &output), 0) << output;
}

// With call stacks in the trace, the converter holds each thread's last API
// record until it knows whether a CallStack follows. A collective that is
// its thread's last record is therefore released after its kernel's GPU
// work (another thread's record) was written: the kernel slice must still
// name the instance.
TEST(MultiRankConvert, AKernelSliceNamesItsCollectiveWhileTheCallWaitsForItsStack) {
  TraceBuilder trace;
  const uint64_t section = 0x77;
  const Rank rank = add_rank(trace, section, 0, "hostA", 1'000'000'000, 1'700'000'000'000'000'000);
  NativeStackDefRecord stack{};
  stack.header = header_for<NativeStackDefRecord>();
  stack.header.bytes = static_cast<uint16_t>(sizeof stack + 8);
  stack.id = 1;
  stack.frame_count = 1;
  std::vector<uint8_t> bytes(sizeof stack + 8, 0);
  std::memcpy(bytes.data(), &stack, sizeof stack);
  const uint64_t pc = 0x401000;
  std::memcpy(bytes.data() + sizeof stack, &pc, sizeof pc);
  trace.raw_record(section, ChunkKind::kDefinitions, bytes);
  // launch and call on thread 1 (the call last), the kernel on thread 2.
  add_allreduce(trace, rank, 0, 2, 5, 42, 1'000'001'000, 1'000'002'000, 1'000'003'000);
  const ConvertedTrace converted = convert_trace(trace);
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  const auto kernels = converted.with_phase('X', "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const JsonValue* label = (*kernels[0])["args"].find("collective");
  ASSERT_NE(label, nullptr) << "the kernel slice lost its instance label";
  EXPECT_EQ(label->str(), "0xc0ffee/5");
}

std::vector<std::vector<std::string>> csv_table(const std::string& out, const std::string& title) {
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

// Four ranks on one host; rank r reaches the all-reduce at 1000 * (r + 1) ns
// and all end at 5000: rank 3 is the straggler, ranks 0..2 wait 3000, 2000,
// 1000 ns; the collective itself takes 1000 ns (rank 3's duration). Rank 0
// also runs a compute kernel [500, 1500] that overlaps its collective by 500.
std::string four_rank_trace() {
  TraceBuilder trace;
  constexpr uint64_t kBase = 1'000'000'000;
  for (int32_t r = 0; r < 4; ++r) {
    ProcessSpec spec;
    spec.pid = 100 + r;
    spec.rank = r;
    spec.world_size = 4;
    spec.monotonic_ns = kBase;
    const uint64_t section = 0x10 + r;
    trace.process(section, spec);
    trace.function(section, kKernel, "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
    const Rank rank{section, trace.api(section, "ncclAllReduce", ApiDomain::kCollective),
                    trace.api(section, "cuLaunchKernel", ApiDomain::kDriver)};
    add_allreduce(trace, rank, r, 4, 1, 7, kBase + 900, kBase + 1000 * (r + 1), kBase + 5000, 1'000'000);
    if (r == 0) trace.event(section, 2, activity(99, kBase + 500, kBase + 1500, kStream, GpuActivityKind::kKernel));
  }
  return write_trace(trace, "four_ranks.trace");
}

TEST(NcclStats, WaitStragglerBandwidthAndOverlapFromKnownNumbers) {
  const std::string path = four_rank_trace();
  tools::StatsCommand command;
  command.inputs = {path};
  command.csv = true;
  const CommandOutput csv = run_stats_on(command);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;

  const auto collectives = csv_table(csv.out, "NCCL collectives");
  ASSERT_EQ(collectives.size(), 1u) << csv.out;
  const auto& row = collectives[0];
  EXPECT_EQ(row[0], "AllReduce");
  EXPECT_EQ(row[1], "1000000");  // size
  EXPECT_EQ(row[2], "4");        // ranks
  EXPECT_EQ(row[3], "1");        // one instance
  EXPECT_EQ(row[5], "1000");     // its own time: the last rank's duration
  EXPECT_EQ(row[8], "1000.00");  // algbw: 1e6 bytes / 1000 ns
  EXPECT_EQ(row[9], "1500.00");  // busbw: * 2 (n-1) / n

  std::map<std::string, std::vector<std::string>> ranks;
  for (const auto& r : csv_table(csv.out, "NCCL ranks")) ranks[r[0]] = r;
  ASSERT_EQ(ranks.size(), 4u) << csv.out;
  EXPECT_EQ(ranks["0"][5], "3000");
  EXPECT_EQ(ranks["1"][5], "2000");
  EXPECT_EQ(ranks["2"][5], "1000");
  EXPECT_EQ(ranks["3"][5], "0");
  EXPECT_EQ(ranks["3"][7], "1");     // arrived last once
  EXPECT_EQ(ranks["3"][8], "6000");  // the others waited 6000 ns for it
  EXPECT_EQ(ranks["0"][1], "1000");  // compute
  EXPECT_EQ(ranks["0"][2], "4000");  // communication [1000, 5000]
  EXPECT_EQ(ranks["0"][3], "500");   // overlap

  command.csv = false;
  command.sections = {"nccl-ranks"};
  const CommandOutput text = run_stats_on(command);
  EXPECT_NE(text.out.find("straggler: rank 3 (arrived last at 1 of 1 collectives"), std::string::npos) << text.out;
}

// The recommendations' multi-rank rules read the same analysis: four_rank_trace's
// straggler made the others wait 6000 of the ranks' 10000 ns of
// communication, and only 500 ns of it overlapped compute.
std::map<std::string, JsonValue> recommendation_rows(const std::string& path) {
  tools::StatsCommand command;
  command.inputs = {path};
  command.sections = {"recommendations"};
  command.json = true;
  const CommandOutput out = run_stats_on(command);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  std::string error;
  const auto document = parse_json(out.out, &error);
  EXPECT_TRUE(document.has_value()) << error << "\n" << out.out;
  std::map<std::string, JsonValue> rows;
  if (!document) return rows;
  for (const JsonValue& table : (*document)["tables"].items)
    for (const JsonValue& row : table["rows"].items) rows[row["Rule"].str()] = row;
  return rows;
}

TEST(NcclStats, RecommendationsNameTheStragglerAndTheExposedCommunication) {
  auto rows = recommendation_rows(four_rank_trace());
  const JsonValue& straggler = rows["straggler-rank"];
  EXPECT_EQ(straggler["Result"].str(), "found");
  EXPECT_EQ(straggler["Calls"].str(), "1");
  EXPECT_EQ(straggler["GPU Time (ns)"].str(), "6000");
  EXPECT_NE(straggler["Finding"].str().find("rank 3 arrived last at 1 of 1 collectives; the other ranks waited "
                                            "6000 ns for it (60.0% of all ranks' communication time)"),
            std::string::npos)
      << straggler["Finding"].str();
  const JsonValue& exposed = rows["exposed-communication"];
  EXPECT_EQ(exposed["Result"].str(), "found");
  EXPECT_EQ(exposed["Calls"].str(), "4");
  EXPECT_EQ(exposed["GPU Time (ns)"].str(), "9500");
  EXPECT_NE(exposed["Finding"].str().find("9500 of 10000 ns of collective GPU time (95.0%)"), std::string::npos)
      << exposed["Finding"].str();

  // Two ranks, rank 1 100 ns late at each of 3 all-reduces of 4 us, each
  // under a compute kernel of 10 us on its rank: nothing to say.
  TraceBuilder trace;
  constexpr uint64_t kBase = 1'000'000'000;
  Rank ranks[2] = {add_rank(trace, 0x31, 0, "h", kBase, kBase), add_rank(trace, 0x32, 1, "h", kBase, kBase)};
  uint64_t correlation = 1;
  for (uint64_t step = 0; step < 3; ++step) {
    const uint64_t t = kBase + 100'000 * step;
    for (int32_t r = 0; r < 2; ++r) {
      trace.event(ranks[r].section, 2, activity(correlation++, t, t + 10'000, kStream + 1, GpuActivityKind::kKernel));
      add_allreduce(trace, ranks[r], r, 2, step + 1, correlation++, t + 500, t + 1'000 + r * 100, t + 5'000);
    }
  }
  rows = recommendation_rows(write_trace(trace, "overlapped_ranks.trace"));
  EXPECT_EQ(rows["straggler-rank"]["Result"].str(), "nothing found") << rows["straggler-rank"]["Finding"].str();
  EXPECT_EQ(rows["straggler-rank"]["GPU Time (ns)"].str(), "300");
  EXPECT_EQ(rows["exposed-communication"]["Result"].str(), "nothing found")
      << rows["exposed-communication"]["Finding"].str();
  EXPECT_EQ(rows["exposed-communication"]["GPU Time (ns)"].str(), "0");
}

// The analysis keeps a bounded window of kernels and seals each section's
// time sums as it reads: with a window of 4 kernels and a seal every 8
// intervals, a long two-rank trace must give exactly the numbers of the
// default sizes (under which nothing is sealed before the end).
TEST(NcclStats, SealingAsItReadsGivesTheNumbersOfOnePass) {
  TraceBuilder trace;
  constexpr uint64_t kBase = 1'000'000'000;
  Rank ranks[2] = {add_rank(trace, 0x21, 0, "h", kBase, kBase), add_rank(trace, 0x22, 1, "h", kBase, kBase)};
  uint64_t correlation = 1;
  for (uint64_t step = 0; step < 300; ++step) {
    const uint64_t t = kBase + 10'000 * step;
    for (int32_t r = 0; r < 2; ++r) {
      // Compute [t, t + 3000 + r * 100], two kernels on one stream at times
      // overlapping each other, then the all-reduce from t + 2500 + step % 7 * 100 to t + 6000.
      trace.event(ranks[r].section, 2, activity(correlation++, t, t + 2000, kStream, GpuActivityKind::kKernel));
      trace.event(ranks[r].section, 2,
                  activity(correlation++, t + 1500, t + 3000 + r * 100, kStream, GpuActivityKind::kKernel));
      add_allreduce(trace, ranks[r], r, 2, step + 1, correlation++, t + 2400, t + 2500 + step % 7 * 100, t + 6000);
    }
  }
  const std::string path = write_trace(trace, "sealing.trace");

  auto analyse = [&](stats::CollectiveAnalysis& analysis) {
    std::vector<InputTrace> inputs;
    std::string error;
    ASSERT_TRUE(open_inputs({path}, &inputs, &error)) << error;
    TraceModel model;
    load_definitions(inputs, model);
    interpret::Interpreter(model, {&analysis}).run(inputs);
    analysis.finish(model);
  };
  stats::CollectiveAnalysis one_pass, sealed(/*window=*/4, /*seal_at=*/8);
  analyse(one_pass);
  analyse(sealed);
  ASSERT_EQ(one_pass.ranks().size(), 2u);
  EXPECT_EQ(one_pass.calls_without_gpu_time(), 0u);
  EXPECT_EQ(sealed.calls_without_gpu_time(), 0u);
  EXPECT_EQ(sealed.instances().size(), one_pass.instances().size());
  for (const auto& [rank, expected] : one_pass.ranks()) {
    const stats::RankTimes& got = sealed.ranks().at(rank);
    EXPECT_EQ(got.compute_ns, expected.compute_ns) << "rank " << rank;
    EXPECT_EQ(got.communication_ns, expected.communication_ns) << "rank " << rank;
    EXPECT_EQ(got.overlap_ns, expected.overlap_ns) << "rank " << rank;
    EXPECT_EQ(got.wait_ns, expected.wait_ns) << "rank " << rank;
  }
  // And the known numbers: per step, compute [t, t + 3000 + 100 r], communication from
  // t + 2500 + (step % 7) * 100 to t + 6000.
  int64_t communication = 0, overlap[2] = {0, 0};
  for (uint64_t step = 0; step < 300; ++step) {
    const int64_t start = 2500 + int64_t(step % 7) * 100;
    communication += 6000 - start;
    for (int r = 0; r < 2; ++r) overlap[r] += std::max<int64_t>(0, 3000 + 100 * r - start);
  }
  for (int32_t r = 0; r < 2; ++r) {
    EXPECT_EQ(one_pass.ranks().at(r).compute_ns, 300 * (3000 + 100 * r));
    EXPECT_EQ(one_pass.ranks().at(r).communication_ns, communication);
    EXPECT_EQ(one_pass.ranks().at(r).overlap_ns, overlap[r]);
  }
}

TEST(NcclStats, TracesWithoutCollectivesPrintNoNcclTables) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x1, 10, 1'000'000'000);
  trace.event(p.section, 10, launch(p, 1, 1'000'000'100, 1'000'000'200, 0xF00, kStream));
  trace.event(p.section, 10, activity(1, 1'000'000'300, 1'000'000'400, kStream, GpuActivityKind::kKernel));
  tools::StatsCommand command;
  command.inputs = {write_trace(trace, "no_nccl.trace")};
  const CommandOutput out = run_stats_on(command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out.find("NCCL"), std::string::npos) << out.out;
}

}  // namespace
}  // namespace proflaunch::testing
