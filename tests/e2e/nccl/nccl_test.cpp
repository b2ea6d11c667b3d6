// NCCL jobs end to end: four ranks under the torchrun-like launcher on the
// simulated NCCL, traced by the real launcher and shim, read back with the
// formats reader and proftrace. Each rank checks its own collective results,
// so the runs also prove tracing changed nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/nccl/nccl_trace.h"

namespace proflaunch::e2e {
namespace {

using namespace proflaunch::format;

constexpr int kRanks = 4;
constexpr uint64_t kCount = 1024;

std::vector<std::string> job(const std::vector<std::string>& rank_args) {
  std::vector<std::string> argv = {build_path("TORCHRUN_LIKE"), "--nproc", std::to_string(kRanks),
                                   build_path("NCCL_RANKS"), "--count", std::to_string(kCount)};
  argv.insert(argv.end(), rank_args.begin(), rank_args.end());
  return argv;
}

int ok_lines(const std::string& out) {
  int n = 0;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) n += line.find(" ok") != std::string::npos;
  return n;
}

bool is_nccl_kernel(const std::string& mangled) { return mangled.find("ncclDevKernel_") != std::string::npos; }

TEST(Nccl, FourRanksRecordEveryCollectiveWithItsCommunicatorCountsAndKernel) {
  TempDir dir;
  const ProcessResult run = testing::run_process(traced(dir / "job.trace", job({"--iterations", "2"})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(ok_lines(run.out), kRanks) << run.out;

  const auto ranks = load_rank_traces({dir / "job.trace"});
  ASSERT_EQ(ranks.size(), size_t(kRanks));
  std::set<uint64_t> comm_ids;
  for (const auto& [rank, t] : ranks) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    ASSERT_EQ(t.comms.size(), 2u);  // init and destroy
    EXPECT_EQ(t.comms[0].action, uint8_t(CommAction::kInit));
    EXPECT_EQ(t.comms[0].rank, rank);
    EXPECT_EQ(t.comms[0].nranks, kRanks);
    EXPECT_EQ(t.comms[1].action, uint8_t(CommAction::kDestroy));
    comm_ids.insert(t.comms[0].comm_id);

    // Two iterations of each, with counts and bytes as called.
    const auto allreduce = t.of(CollectiveOp::kAllReduce);
    const auto allgather = t.of(CollectiveOp::kAllGather);
    const auto reducescatter = t.of(CollectiveOp::kReduceScatter);
    const auto broadcast = t.of(CollectiveOp::kBroadcast);
    const auto sends = t.of(CollectiveOp::kSend);
    const auto recvs = t.of(CollectiveOp::kRecv);
    ASSERT_EQ(allreduce.size(), 2u);
    ASSERT_EQ(allgather.size(), 2u);
    ASSERT_EQ(reducescatter.size(), 2u);
    ASSERT_EQ(broadcast.size(), 2u);
    ASSERT_EQ(sends.size(), 2u);
    ASSERT_EQ(recvs.size(), 2u);
    for (const CollectiveRecord& c : t.collectives) {
      EXPECT_EQ(c.count, kCount);
      EXPECT_EQ(c.bytes, kCount * 4);  // float32
      EXPECT_EQ(c.datatype, 7);        // ncclFloat32
      EXPECT_EQ(c.rank, rank);
      EXPECT_EQ(c.nranks, kRanks);
      EXPECT_EQ(c.comm_id, t.comms[0].comm_id);
      EXPECT_EQ(c.span.result, 0);
    }
    EXPECT_EQ(allreduce[0]->reduction, 0);  // ncclSum
    EXPECT_EQ(broadcast[0]->root, 0);
    EXPECT_EQ(sends[0]->root, (rank + 1) % kRanks);
    EXPECT_EQ(recvs[0]->root, (rank + kRanks - 1) % kRanks);
    // Collectives are numbered alike on every rank: 5 per iteration... minus
    // the grouped send/recv, numbered per peer instead.
    EXPECT_EQ(allreduce[0]->sequence, 1u);
    EXPECT_EQ(allgather[0]->sequence, 2u);
    EXPECT_EQ(allreduce[1]->sequence, 5u);
    EXPECT_EQ(sends[1]->sequence, 2u);

    // Outside a group: the kernel launched inside the call carries its
    // correlation id, and its GPU time starts no earlier than the call.
    for (const auto* c : {allreduce[0], allgather[1], reducescatter[0], broadcast[1]}) {
      EXPECT_EQ(c->group_id, 0u);
      auto launch = t.launches.find(c->span.correlation_id);
      ASSERT_NE(launch, t.launches.end()) << "no launch carries the collective's correlation id";
      EXPECT_TRUE(is_nccl_kernel(t.kernel_names.at(c->span.correlation_id)));
      EXPECT_GE(launch->second.span.begin_ns, c->span.begin_ns);
      EXPECT_LE(launch->second.span.end_ns, c->span.end_ns);
      auto gpu = t.activities.find(c->span.correlation_id);
      ASSERT_NE(gpu, t.activities.end()) << "the collective's kernel has GPU time";
      EXPECT_GE(gpu->second.start_ns, c->span.begin_ns);
      EXPECT_GT(gpu->second.end_ns, gpu->second.start_ns);
    }
    // The grouped send and receive: members of one group, whose record
    // names the kernel launched for them.
    EXPECT_NE(sends[0]->group_id, 0u);
    EXPECT_EQ(sends[0]->group_id, recvs[0]->group_id);
    EXPECT_EQ(sends[0]->group_depth, 1);
    const CollectiveGroupRecord* group = nullptr;
    for (const auto& g : t.groups)
      if (g.group_id == sends[0]->group_id) group = &g;
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->members, 2u);
    EXPECT_EQ(group->stream, sends[0]->stream);
    ASSERT_TRUE(t.launches.count(group->span.correlation_id));
    EXPECT_NE(t.kernel_names.at(group->span.correlation_id).find("ncclDevKernel_SendRecv"), std::string::npos);
    EXPECT_TRUE(t.activities.count(group->span.correlation_id));
    // Under CUPTI (the default where it works, as here) the collectives stay
    // timed from the rank's arrival, and CUPTI's own records of their kernels
    // are known to the shim: none is reported as work no hook saw.
    EXPECT_EQ(t.gpu_timing_source, uint8_t(GpuTimingSource::kCupti));
    EXPECT_EQ(t.unattributed, 0u);
  }
  EXPECT_EQ(comm_ids.size(), 1u) << "every rank names the communicator alike";
}

TEST(Nccl, TheSlowRankIsNamedAndTheOthersWaitForIt) {
  constexpr int kDelayMs = 120;
  constexpr int kIterations = 3;
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "job.trace", job({"--ops", "allreduce", "--iterations", std::to_string(kIterations),
                                     "--slow-rank", "2", "--delay-ms", std::to_string(kDelayMs)})));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult stats = run_proftrace({"stats", "--section", "nccl-ranks", "--csv", dir / "job.trace"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  std::map<std::string, int64_t> wait_ns;
  std::istringstream lines(stats.out);
  std::string line;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // columns
  while (std::getline(lines, line) && !line.empty()) {
    std::vector<std::string> cells;
    std::istringstream split(line);
    for (std::string cell; std::getline(split, cell, ',');) cells.push_back(cell);
    ASSERT_GE(cells.size(), 6u) << line;
    wait_ns[cells[0]] = std::stoll(cells[5]);
  }
  ASSERT_EQ(wait_ns.size(), size_t(kRanks)) << stats.out;
  // Each fast rank waited for the slow one at every all-reduce: at least half
  // the injected delay each time (the rest is slack for a loaded machine).
  for (const char* fast : {"0", "1", "3"})
    EXPECT_GE(wait_ns[fast], int64_t(kIterations) * kDelayMs * 1'000'000 / 2) << "rank " << fast << "\n" << stats.out;
  EXPECT_LT(wait_ns["2"], wait_ns["0"]);

  const ProcessResult text = run_proftrace({"stats", "--section", "nccl-ranks", dir / "job.trace"});
  EXPECT_NE(text.out.find("straggler: rank 2 "), std::string::npos) << text.out;
}

// Per-rank files, each written by a proflaunch that torchrun started (the
// launcher under torchrun), merged by proftrace convert.
TEST(Nccl, PerRankFilesMergeIntoOneTimelineWithAlignedCollectiveEnds) {
  TempDir dir;
  std::vector<std::string> argv = {build_path("TORCHRUN_LIKE"), "--nproc", std::to_string(kRanks),
                                   build_path("PROFLAUNCH_EXE"), "-q", "-o", dir / "rank%q{RANK}.trace", "--",
                                   build_path("NCCL_RANKS"), "--ops", "allreduce,allgather", "--iterations", "2"};
  RunOptions options = untraced(argv);
  const ProcessResult run = testing::run_process(options);
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  std::vector<std::string> files;
  for (int r = kRanks - 1; r >= 0; --r) files.push_back(dir / ("rank" + std::to_string(r) + ".trace"));
  std::vector<std::string> args = {"convert"};
  args.insert(args.end(), files.begin(), files.end());
  args.insert(args.end(), {"-o", dir / "all.json"});
  const ProcessResult convert = run_proftrace(args);
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();

  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(dir / "all.json", &json, &error)) << error;
  // Every rank is a process, named by rank and sorted by it.
  std::map<uint64_t, std::string> names;
  std::map<uint64_t, int64_t> sort_index;
  for (const JsonValue* e : json.events) {
    if ((*e)["ph"].str() != "M") continue;
    if ((*e)["name"].str() == "process_name") names[(*e)["pid"].as_uint()] = (*e)["args"]["name"].str();
    if ((*e)["name"].str() == "process_sort_index") sort_index[(*e)["pid"].as_uint()] = (*e)["args"]["sort_index"].as_int();
  }
  std::map<int64_t, int> rank_by_order;
  for (const auto& [pid, name] : names)
    for (int r = 0; r < kRanks; ++r)
      if (name.rfind("[rank " + std::to_string(r) + "]", 0) == 0) rank_by_order[sort_index[pid]] = r;
  ASSERT_EQ(rank_by_order.size(), size_t(kRanks));
  int expected = 0;
  for (const auto& [order, rank] : rank_by_order) EXPECT_EQ(rank, expected++);

  // The same instance on every rank: one `collective` id; its kernels end
  // together. Stated tolerance: 50 ms (the simulated ranks wake from one
  // futex; on 2 loaded cores that can take milliseconds).
  std::map<std::string, std::vector<double>> ends_us;
  for (const JsonValue* slice : json.slices("kernel")) {
    const JsonValue* collective = (*slice)["args"].find("collective");
    if (collective != nullptr) ends_us[collective->str()].push_back((*slice)["ts"].as_double() + (*slice)["dur"].as_double());
  }
  ASSERT_EQ(ends_us.size(), 4u) << "2 iterations x (all-reduce, all-gather)";
  for (const auto& [instance, ends] : ends_us) {
    ASSERT_EQ(ends.size(), size_t(kRanks)) << instance;
    const auto [low, high] = std::minmax_element(ends.begin(), ends.end());
    EXPECT_LT(*high - *low, 50'000.0) << instance;
  }

  // Each file converted alone (as HTA wants them, one per rank) is on the
  // same clock: Kineto's baseTimeNanoseconds, the same in every file, and ts
  // from it, so the instances still end together across the files.
  std::map<std::string, std::vector<double>> alone_ends_us;
  std::set<std::string> base_times;
  for (int r = 0; r < kRanks; ++r) {
    const std::string out = dir / ("rank" + std::to_string(r) + ".json");
    const ProcessResult alone = run_proftrace({"convert", dir / ("rank" + std::to_string(r) + ".trace"), "-o", out});
    ASSERT_TRUE(alone.exited_with(0)) << alone.describe();
    PerfettoJson rank_json;
    ASSERT_TRUE(load_perfetto_json(out, &rank_json, &error)) << error;
    const JsonValue* base = rank_json.document.find("baseTimeNanoseconds");
    ASSERT_NE(base, nullptr) << out;
    base_times.insert(base->str());
    for (const JsonValue* slice : rank_json.slices("kernel")) {
      const JsonValue* collective = (*slice)["args"].find("collective");
      if (collective != nullptr)
        alone_ends_us[collective->str()].push_back((*slice)["ts"].as_double() + (*slice)["dur"].as_double());
    }
  }
  EXPECT_EQ(base_times.size(), 1u) << "one base time for the whole job";
  ASSERT_EQ(alone_ends_us.size(), ends_us.size());
  for (auto& [instance, ends] : alone_ends_us) {
    ASSERT_EQ(ends.size(), size_t(kRanks)) << instance;
    const auto [low, high] = std::minmax_element(ends.begin(), ends.end());
    EXPECT_LT(*high - *low, 50'000.0) << instance << ": the files do not line up";
    // Where the merged file put them, up to the processes' clock snapshots
    // (taken microseconds apart; 1 ms stated).
    std::vector<double> merged = ends_us[instance];
    std::sort(ends.begin(), ends.end());
    std::sort(merged.begin(), merged.end());
    for (size_t i = 0; i < ends.size(); ++i) EXPECT_NEAR(ends[i], merged[i], 1'000.0) << instance;
  }
}

TEST(Nccl, ARankThatCrashesMakesTheOthersFailAndEveryTraceStaysReadable) {
  TempDir dir;
  RunOptions options = traced(dir / "job.trace", job({"--ops", "allreduce", "--iterations", "3", "--crash-rank", "1",
                                                      "--crash-after", "1"}),
                              {}, {{"SIMNCCL_TIMEOUT_MS", "10000"}});
  const ProcessResult run = testing::run_process(options);
  EXPECT_FALSE(run.exited_with(0)) << run.describe();
  // The survivors noticed the dead peer (they did not hang until killed).
  EXPECT_FALSE(run.timed_out);
  int failed = 0;
  std::istringstream lines(run.out);
  for (std::string line; std::getline(lines, line);) failed += line.find("ncclAllReduce failed: remote process") != std::string::npos;
  EXPECT_EQ(failed, kRanks - 1) << run.out;

  const ProcessResult info = run_proftrace({"info", dir / "job.trace"});
  EXPECT_TRUE(info.exited_with(0)) << info.describe();
  const ProcessResult convert = run_proftrace({"convert", dir / "job.trace", "-o", dir / "job.json"});
  EXPECT_TRUE(convert.exited_with(0)) << convert.describe();
  const ProcessResult stats = run_proftrace({"stats", dir / "job.trace"});
  EXPECT_TRUE(stats.exited_with(0)) << stats.describe();

  const auto ranks = load_rank_traces({dir / "job.trace"});
  ASSERT_EQ(ranks.size(), size_t(kRanks));
  for (const auto& [rank, t] : ranks) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    // Everyone completed step 0; the survivors also called step 1's all-reduce.
    EXPECT_EQ(t.of(CollectiveOp::kAllReduce).size(), rank == 1 ? 1u : 2u);
    EXPECT_EQ(t.ended, rank != 1) << "only the crashed rank lacks its SectionEnd";
  }
}

}  // namespace
}  // namespace proflaunch::e2e
