// Capture windows end to end: capture_steps (programs/) under proflaunch
// with --capture-range, --steps, --delay and --duration, each timed by CUPTI
// and by events. A step's copy is 4096 * (step + 1) bytes, so the
// host-to-device copies in a trace say which steps it holds. Every traced
// run must print what the untraced run prints, and hold the GPU work of its
// recorded calls and no other: CUPTI times all work, and what the calls
// outside the windows launched must be dropped, not drawn as work no hooked
// call made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/capture/capture_support.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

using format::CaptureTrigger;
using format::CaptureWindowAction;

struct TracedRun {
  ProcessResult untraced, traced;
  std::string path;
  CudaTrace trace;
};

// The GPU-time backend of the test being run ("cupti" or "events").
std::string g_timing = "events";

class CaptureWindows : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { g_timing = GetParam(); }
};

std::vector<std::string> with_timing(std::vector<std::string> options) {
  options.push_back("--gpu-timing=" + g_timing);
  return options;
}

// The GPU work in the trace is exactly that of its recorded launches,
// copies and memsets: each has its one piece, and nothing else is there.
void expect_gpu_work_of_recorded_calls_only(const CudaTrace& trace) {
  for (const ProcessImage& image : trace.images) {
    EXPECT_TRUE(image.unattributed.empty())
        << image.unattributed.size() << " pieces of GPU work no recorded call made (" << g_timing << ")";
    size_t joined = 0;
    for (const Operation& op : image.operations) {
      EXPECT_EQ(op.gpu.size(), 1u) << op.api << " has its GPU time (" << g_timing << ")";
      joined += op.gpu.size();
    }
    EXPECT_EQ(image.gpu_activities.size(), joined) << "GPU work whose call is not in the trace (" << g_timing << ")";
  }
}

TracedRun run(const TempDir& dir, const std::vector<std::string>& program_args, const std::vector<std::string>& options,
        const std::string& name = "capture.trace") {
  std::vector<std::string> program = {build_path("CAPTURE_STEPS")};
  program.insert(program.end(), program_args.begin(), program_args.end());
  TracedRun r;
  r.untraced = testing::run_process(untraced(program));
  r.path = dir.path() + "/" + name;
  r.traced = testing::run_process(traced(r.path, program, with_timing(options)));
  EXPECT_TRUE(r.untraced.exited_with(0)) << r.untraced.describe();
  EXPECT_TRUE(r.traced.exited_with(0)) << r.traced.describe();
  EXPECT_EQ(r.traced.out, r.untraced.out);
  r.trace = load_trace_or_fail(r.path);
  expect_gpu_work_of_recorded_calls_only(r.trace);
  return r;
}

std::set<int> recorded_steps(const CudaTrace& trace) {
  const std::vector<int> copies = step_copies(trace);
  return {copies.begin(), copies.end()};
}


uint8_t trigger(CaptureTrigger t) { return static_cast<uint8_t>(t); }

// Every recorded call lies inside a window (carried state at its begin).
void expect_calls_inside_windows(const CudaTrace& trace) {
  for (const ProcessImage& image : trace.images) {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const auto& w : image.windows) {
      if (w.action == static_cast<uint8_t>(CaptureWindowAction::kBegin)) spans.push_back({w.at_ns, UINT64_MAX});
      else if (!spans.empty()) spans.back().second = w.at_ns;
    }
    ASSERT_FALSE(spans.empty());
    for (const SpanRecord& call : image.spans) {
      const bool inside = std::any_of(spans.begin(), spans.end(), [&](const auto& s) {
        return call.span.begin_ns >= s.first && call.span.begin_ns <= s.second;
      });
      EXPECT_TRUE(inside) << call.api << " at " << call.span.begin_ns << " is outside every window";
    }
  }
}

// stats --section overview on a whole run: one step per "train_step" range
// (found by the heuristic, no --step-range), and each step's categories add
// up to its duration with none over it.
TEST_P(CaptureWindows, OverviewFindsOneStepPerTrainStepRange) {
  TempDir dir;
  TracedRun r = run(dir, {"--steps", "6"}, {}, "overview.trace");
  const ProcessResult stats = run_proftrace({"stats", r.path, "--csv", "--section", "overview"});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  std::istringstream lines(stats.out.substr(stats.out.find("# Overview: step time breakdown")));
  std::string line;
  std::getline(lines, line);  // title
  std::getline(lines, line);  // columns
  std::vector<std::string> columns;
  for (std::stringstream cells(line); std::getline(cells, line, ',');) columns.push_back(line);
  size_t steps = 0;
  while (std::getline(lines, line) && !line.empty() && line[0] != '#') {
    std::vector<std::string> cells;
    for (std::stringstream row(line); std::getline(row, line, ',');) cells.push_back(line);
    ASSERT_EQ(cells.size(), columns.size()) << stats.out;
    uint64_t duration = 0, sum = 0;
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c] == "Duration (ns)") duration = std::stoull(cells[c]);
      else if (columns[c].ends_with("(ns)") && columns[c] != "Start (ns)") sum += std::stoull(cells[c]);
    }
    if (cells[0] != "average") EXPECT_EQ(sum, duration) << "row " << cells[0] << "\n" << stats.out;
    steps += cells[0] != "average" && cells[0] != "total";
  }
  EXPECT_EQ(steps, 6u) << stats.out;
  const ProcessResult text = run_proftrace({"stats", r.path, "--section", "overview"});
  EXPECT_NE(text.out.find("NVTX range 'train_step'"), std::string::npos) << text.out;
}

TEST_P(CaptureWindows, ProfilerApiRecordsOnlyBetweenStartAndStopWithTheLiveSetCarriedIn) {
  TempDir dir;
  TracedRun r = run(dir, {"--steps", "7", "--profiler", "2-4"}, {"--capture-range=cudaProfilerApi"});
  EXPECT_EQ(recorded_steps(r.trace), (std::set<int>{2, 3, 4})) << describe(r.trace);
  const auto begins = windows(r.trace, CaptureWindowAction::kBegin);
  const auto ends = windows(r.trace, CaptureWindowAction::kEnd);
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kProfilerApi));
  EXPECT_EQ(ends[0].trigger, trigger(CaptureTrigger::kProfilerApi));
  expect_calls_inside_windows(r.trace);
  // CUPTI timed the work of the steps outside the window as well: dropped,
  // and counted as such (not as lost, not as work no hooked call made).
  const ProcessResult info = run_proftrace({"info", r.path});
  ASSERT_TRUE(info.exited_with(0)) << info.describe();
  const size_t outside = info.out.find("GPU work of calls outside the capture windows");
  if (g_timing == "cupti") {
    ASSERT_NE(outside, std::string::npos) << info.out;
    EXPECT_GT(std::stoul(info.out.substr(info.out.find(": ", outside) + 2)), 0u) << info.out;
  } else {
    EXPECT_EQ(outside, std::string::npos) << info.out;
  }
  EXPECT_NE(info.out.find("unattributed GPU work (no hooked call launched it): 0"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("dropped events: 0 in 0 LOST records"), std::string::npos) << info.out;

  // Memory: the blocks allocated before the window are carried in at its
  // start (1 MiB kept, 3 MiB freed in step 3, the loss buffers); the 3 MiB
  // free inside the window has its block; temporaries only of steps 2-4.
  ASSERT_EQ(r.trace.images.size(), 1u);
  const ProcessImage& image = r.trace.images[0];
  std::multiset<uint64_t> carried, allocated;
  int frees_of_early = 0;
  uint64_t early = 0;
  for (const auto& m : image.memory) {
    if (m.action != static_cast<uint8_t>(format::MemoryAction::kAcquire)) continue;
    if (m.span.flags & format::kApiCarried) {
      carried.insert(m.bytes);
      EXPECT_EQ(m.span.begin_ns, begins[0].at_ns);
      if (m.bytes == (3u << 20)) early = m.address;
    } else {
      allocated.insert(m.bytes);
    }
  }
  EXPECT_EQ(carried.count(1u << 20), 1u);
  EXPECT_EQ(carried.count(3u << 20), 1u);
  EXPECT_EQ(carried.size(), 6u);  // the two blocks, logits, grad, loss, labels
  EXPECT_EQ(allocated, (std::multiset<uint64_t>{3 * 65536, 4 * 65536, 5 * 65536}));
  for (const auto& m : image.memory)
    if (m.action == static_cast<uint8_t>(format::MemoryAction::kRelease) && m.address == early) ++frees_of_early;
  EXPECT_EQ(frees_of_early, 1);
  // ... and the memory report finds every freed block.
  const ProcessResult memory = run_proftrace({"memory", r.path});
  EXPECT_TRUE(memory.exited_with(0)) << memory.describe();
  EXPECT_EQ(memory.out.find("unknown"), std::string::npos) << memory.out;
  EXPECT_NE(memory.out.find("3.0 MiB"), std::string::npos) << memory.out;
}

TEST_P(CaptureWindows, ProfilerApiRepeatCountsWindows) {
  TempDir dir;
  const std::vector<std::string> program = {"--steps", "8", "--profiler", "1-1,3-4,6-6"};
  EXPECT_EQ(recorded_steps(run(dir, program, {"--capture-range=cudaProfilerApi"}, "one.trace").trace),
            (std::set<int>{1}));
  TracedRun two = run(dir, program, {"--capture-range=cudaProfilerApi", "--capture-range-repeat=2"}, "two.trace");
  EXPECT_EQ(recorded_steps(two.trace), (std::set<int>{1, 3, 4}));
  EXPECT_EQ(windows(two.trace, CaptureWindowAction::kBegin).size(), 2u);
  EXPECT_EQ(recorded_steps(run(dir, program, {"--capture-range=cudaProfilerApi", "--capture-range-repeat=0"},
                               "all.trace").trace),
            (std::set<int>{1, 3, 4, 6}));
}

TEST_P(CaptureWindows, NvtxRangeInItsDomainOpensTheWindow) {
  TempDir dir;
  TracedRun r = run(dir, {"--steps", "6", "--region", "2-3"}, {"--capture-range=nvtx:region@app"});
  EXPECT_EQ(recorded_steps(r.trace), (std::set<int>{2, 3}));
  const auto begins = windows(r.trace, CaptureWindowAction::kBegin);
  ASSERT_EQ(begins.size(), 1u);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kNvtxRange));
  expect_calls_inside_windows(r.trace);
  // The same name in the default domain is another range: nothing opens.
  TracedRun other = run(dir, {"--steps", "6", "--region", "2-3"}, {"--capture-range=nvtx:region"}, "default.trace");
  EXPECT_TRUE(recorded_steps(other.trace).empty());
  EXPECT_TRUE(windows(other.trace, CaptureWindowAction::kBegin).empty());
}

TEST_P(CaptureWindows, NvtxStepsFollowTorchProfilerSchedule) {
  TempDir dir;
  // wait 1, warmup 1, active 2, two cycles: steps 2-3 and 6-7.
  TracedRun r = run(dir, {"--steps", "12"}, {"--steps=1:1:2:2", "--step-range=train_step"});
  EXPECT_EQ(recorded_steps(r.trace), (std::set<int>{2, 3, 6, 7}));
  const auto begins = windows(r.trace, CaptureWindowAction::kBegin);
  const auto ends = windows(r.trace, CaptureWindowAction::kEnd);
  ASSERT_EQ(begins.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(begins[0].step, 2u);
  EXPECT_EQ(ends[0].step, 3u);
  EXPECT_EQ(begins[1].step, 6u);
  EXPECT_EQ(ends[1].step, 7u);
  expect_calls_inside_windows(r.trace);
  // stats and convert say what they cover.
  const ProcessResult stats = run_proftrace({"stats", "--section", "capture-windows", r.path});
  EXPECT_NE(stats.out.find("2-3"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("6-7"), std::string::npos) << stats.out;
  const std::string json = dir.path() + "/steps.json";
  const ProcessResult convert = run_proftrace({"convert", r.path, "-o", json});
  EXPECT_TRUE(convert.exited_with(0)) << convert.describe();
  EXPECT_NE(convert.err.find("2 capture windows"), std::string::npos) << convert.err;
}

TEST_P(CaptureWindows, KernelStepsBeginAtEachLaunchOfTheKernel) {
  TempDir dir;
  TracedRun r = run(dir, {"--steps", "8"},
              {"--steps=1:1:2:1", "--step-range=kernel:cross_entropy_loss_forward_backward_kernel"});
  EXPECT_EQ(recorded_steps(r.trace), (std::set<int>{2, 3}));
  ASSERT_EQ(r.trace.images.size(), 1u);
  // The window opens before the step kernel's launch is recorded and
  // closes before the next one's: two launches of it.
  EXPECT_EQ(r.trace.images[0].launch_count("cross_entropy_loss_forward_backward_kernel"), 2);
}

// The value of ` name=` in a `proftrace dump` line (bare words only).
std::string dump_field(const std::string& line, const std::string& name) {
  const size_t at = line.find(" " + name + "=");
  if (at == std::string::npos) return "";
  const size_t start = at + name.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

TEST_P(CaptureWindows, AJobsRanksEachCarryTheirCommunicatorIntoTheWindow) {
  TempDir dir;
  const std::string trace = dir.path() + "/job.trace";
  // Four ranks; a step runs from one AllGather kernel to the next: the
  // second iteration's collectives are recorded, the communicators were
  // made long before.
  const std::vector<std::string> job = {build_path("TORCHRUN_LIKE"), "--nproc", "4", build_path("NCCL_RANKS"),
                                        "--count", "1024", "--iterations", "3", "--ops", "allgather,allreduce"};
  const ProcessResult result = testing::run_process(
      traced(trace, job, with_timing({"--steps=1:0:1:1", "--step-range=kernel:ncclDevKernel_AllGather_RING_LL"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  const ProcessResult dumped = run_proftrace({"dump", trace});
  ASSERT_TRUE(dumped.exited_with(0)) << dumped.describe();
  std::map<std::string, std::set<std::string>> carried_comms;  // section -> comm ids
  std::map<std::string, int> begins, collectives;
  std::vector<std::pair<std::string, std::string>> collective_comms;  // (section, comm id)
  std::istringstream lines(dumped.out);
  for (std::string line; std::getline(lines, line);) {
    const std::string section = dump_field(line, "section");
    if (line.rfind("CaptureWindow ", 0) == 0 && dump_field(line, "action") == "begin") ++begins[section];
    if (line.rfind("CollectiveComm ", 0) == 0) {
      EXPECT_EQ(dump_field(line, "flags"), "0x20") << "a communicator call outside the window: " << line;
      carried_comms[section].insert(dump_field(line, "comm_id"));
    }
    EXPECT_NE(line.rfind("UnattributedGpuWork ", 0), 0u) << "work no recorded call made: " << line;
    if (line.rfind("Collective ", 0) == 0) {
      ++collectives[section];
      collective_comms.push_back({section, dump_field(line, "comm_id")});
      EXPECT_EQ(dump_field(line, "nranks"), "4") << line;
    }
  }
  // The carried records are written by the writer after the window's
  // first records: file order says nothing, the section does.
  for (const auto& [section, comm_id] : collective_comms)
    EXPECT_EQ(carried_comms[section].count(comm_id), 1u) << section << " " << comm_id;
  EXPECT_EQ(begins.size(), 4u) << dumped.out.substr(0, 4000);
  for (const auto& [section, n] : begins) {
    EXPECT_EQ(n, 1) << section;
    EXPECT_EQ(carried_comms[section].size(), 1u) << section;
    EXPECT_GE(collectives[section], 1) << section;
    EXPECT_LE(collectives[section], 3) << section;  // one iteration's, not all three
  }
}

TEST_P(CaptureWindows, DelayAndDurationCutTheRunByTime) {
  TempDir dir;
  // 10 steps of ~80 ms (the first starts well before the delay ends, the last well after).
  TracedRun delayed = run(dir, {"--steps", "10", "--sleep-ms", "80"}, {"--delay=400ms"}, "delay.trace");
  const std::set<int> late = recorded_steps(delayed.trace);
  ASSERT_FALSE(late.empty());
  EXPECT_EQ(late.count(0), 0u);
  EXPECT_EQ(late.count(9), 1u);
  EXPECT_EQ(static_cast<int>(late.size()), *late.rbegin() - *late.begin() + 1) << "not one contiguous run";
  const auto begins = windows(delayed.trace, CaptureWindowAction::kBegin);
  ASSERT_EQ(begins.size(), 1u);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kDelay));

  TracedRun limited = run(dir, {"--steps", "10", "--sleep-ms", "80"}, {"--duration=200ms"}, "duration.trace");
  const std::set<int> early = recorded_steps(limited.trace);
  ASSERT_FALSE(early.empty());
  EXPECT_EQ(early.count(0), 1u);
  EXPECT_EQ(early.count(9), 0u);
  EXPECT_EQ(static_cast<int>(early.size()), *early.rbegin() + 1) << "not a prefix";
  const auto ends = windows(limited.trace, CaptureWindowAction::kEnd);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].trigger, trigger(CaptureTrigger::kDuration));
}

TEST(Capture, BadOptionsAreRejectedBeforeTheProgramRuns) {
  TempDir dir;
  const std::string marker = dir.path() + "/ran";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--capture-range=cudaProfiler"}, "--capture-range"},
      {{"--capture-range=nvtx:"}, "--capture-range"},
      {{"--capture-range-repeat=2"}, "--capture-range-repeat"},
      {{"--capture-range=cudaProfilerApi", "--capture-range-repeat=x"}, "--capture-range-repeat"},
      {{"--delay=soon"}, "--delay"},
      {{"--duration=0s"}, "--duration"},
      {{"--steps=1:2"}, "--steps"},
      {{"--steps=1:1:0", "--step-range=s"}, "--steps"},
      {{"--steps=1:1:1"}, "--steps"},
      {{"--step-range=s"}, "--step-range"},
      {{"--steps=1:1:1", "--step-range=py:train_step"}, "--step-range"},
      {{"--steps=0:0:1", "--step-range=s", "--capture-range=cudaProfilerApi"}, "--steps"},
  };
  for (const auto& [options, named] : cases) {
    std::vector<std::string> command = {build_path("PROFLAUNCH_EXE")};
    command.insert(command.end(), options.begin(), options.end());
    command.insert(command.end(), {"-o", dir.path() + "/bad.trace", "--", "/usr/bin/touch", marker});
    testing::RunOptions o;
    o.argv = command;
    const ProcessResult result = testing::run_process(o);
    EXPECT_TRUE(result.exited_with(2)) << options[0] << ": " << result.describe();
    EXPECT_NE(result.err.find(named), std::string::npos) << result.err;
    EXPECT_NE(access(marker.c_str(), F_OK), 0) << options[0] << ": the program ran";
  }
}

INSTANTIATE_TEST_SUITE_P(Timing, CaptureWindows, ::testing::Values("cupti", "events"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
}  // namespace proflaunch::e2e
