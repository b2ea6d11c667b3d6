// The flight recorder end to end: capture_steps (programs/) under
// proflaunch --ring, ending in a crash, an out-of-memory, a sticky device
// error (the simulated driver's SIMGPU_FAULT_KERNELS), or a plain exit. A
// step's copy is 4096 * (step + 1) bytes, so the copies in a dump say which
// steps it kept. The traced program must behave as the untraced one.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/capture/capture_support.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

using format::CaptureTrigger;
using format::CaptureWindowAction;

struct RingRun {
  ProcessResult untraced, traced;
  std::string path;
  CudaTrace trace;
};

RingRun run(const TempDir& dir, const std::vector<std::string>& program_args, const std::vector<std::string>& options,
            const std::string& name, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::vector<std::string> program = {build_path("CAPTURE_STEPS")};
  program.insert(program.end(), program_args.begin(), program_args.end());
  RingRun r;
  r.untraced = testing::run_process(untraced(program, env));
  r.path = dir.path() + "/" + name;
  r.traced = testing::run_process(traced(r.path, program, options, env));
  EXPECT_EQ(r.traced.out, r.untraced.out);
  r.trace = load_trace_or_fail(r.path);
  return r;
}

std::vector<int> recorded_steps(const CudaTrace& trace) { return step_copies(trace); }


uint8_t trigger(CaptureTrigger t) { return static_cast<uint8_t>(t); }

// The carried acquires of a trace, by size.
std::multiset<uint64_t> carried_sizes(const CudaTrace& trace) {
  std::multiset<uint64_t> out;
  for (const ProcessImage& image : trace.images)
    for (const auto& m : image.memory)
      if (m.action == static_cast<uint8_t>(format::MemoryAction::kAcquire) && (m.span.flags & format::kApiCarried))
        out.insert(m.bytes);
  return out;
}

TEST(Ring, CrashWritesOutOnlyTheLastStepsWithTheBlocksAliveBeforeThem) {
  TempDir dir;
  // 40 steps of >= 40 ms: ~1.6 s, of which the ring keeps the last 400 ms.
  RingRun r = run(dir, {"--steps", "40", "--sleep-ms", "40", "--end", "crash"}, {"--ring=400ms"}, "crash.trace");
  EXPECT_TRUE(r.untraced.killed_by(SIGSEGV)) << r.untraced.describe();
  EXPECT_TRUE(r.traced.exited_with(128 + SIGSEGV)) << r.traced.describe();

  const std::vector<int> steps = recorded_steps(r.trace);
  ASSERT_FALSE(steps.empty()) << describe(r.trace);
  // A suffix of the run: the last step, every step since the first kept one,
  // and nothing from the start (400 ms, plus at most a flush interval of
  // chunk granularity, is far less than 20 steps of 40 ms).
  EXPECT_EQ(steps.back(), 39);
  EXPECT_GE(steps.front(), 20) << describe(r.trace);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_EQ(steps[i], steps[i - 1] + 1);

  const auto begins = windows(r.trace, CaptureWindowAction::kBegin);
  const auto ends = windows(r.trace, CaptureWindowAction::kEnd);
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kCrash));
  EXPECT_EQ(ends[0].trigger, trigger(CaptureTrigger::kCrash));
  EXPECT_LT(begins[0].at_ns, ends[0].at_ns);
  // Every recorded call lies in the dump's window.
  for (const ProcessImage& image : r.trace.images)
    for (const SpanRecord& call : image.spans) {
      EXPECT_GE(call.span.begin_ns, begins[0].at_ns) << call.api;
      EXPECT_LE(call.span.begin_ns, ends[0].at_ns) << call.api;
    }
  // The blocks alive before the kept records: 1 MiB, logits, grad, loss,
  // labels (the 3 MiB block was freed in step 3, long before); and when the
  // window opened inside a step, between its temporary block's cudaMalloc
  // and cudaFree, that block ((s + 1) x 64 KiB): of the first kept step, or
  // of the step before it when that step's copy fell before the window.
  std::multiset<uint64_t> carried = carried_sizes(r.trace);
  for (int s : {steps.front(), steps.front() - 1}) {
    const auto temp = carried.find(uint64_t(s + 1) * 64 * 1024);
    if (temp == carried.end()) continue;
    carried.erase(temp);
    break;
  }
  EXPECT_EQ(carried, (std::multiset<uint64_t>{4, 32 * 4, 16 * 32 * 4, 16 * 32 * 4, 1u << 20})) << describe(r.trace);
  // Every free inside the dump finds its block.
  const ProcessResult memory = run_proftrace({"memory", r.path});
  EXPECT_TRUE(memory.exited_with(0)) << memory.describe();
  EXPECT_EQ(memory.out.find("unknown"), std::string::npos) << memory.out;
  // stats and convert say what the trace covers.
  const ProcessResult stats = run_proftrace({"stats", r.path, "--section", "capture-windows"});
  EXPECT_NE(stats.out.find("crash"), std::string::npos) << stats.out;
}

TEST(Ring, OutOfMemoryThenCrashWritesTwoWindowsThatDoNotOverlap) {
  TempDir dir;
  // The steps after the failed allocation sleep before they start, so that
  // the writer has written the first dump before their calls (a dump follows
  // its trigger within a drain period, <= 10 ms, on an idle machine; under
  // ASan with two tests at once it came ~1 s late, and under TSan a few ms
  // late, in the middle of the next step, whose call then spanned the
  // windows' boundary): 250 ms each.
  // The 250 ms sleeps are the gap between the windows: recorded as blocking
  // calls they would span the boundary themselves (--osrt-threshold=off).
  RingRun r = run(dir, {"--steps", "6", "--sleep-ms", "250", "--end", "oom,crash"},
                  {"--ring=30s", "--osrt-threshold=off"}, "oom.trace");
  EXPECT_TRUE(r.traced.exited_with(128 + SIGSEGV)) << r.traced.describe();
  const auto begins = windows(r.trace, CaptureWindowAction::kBegin);
  ASSERT_EQ(begins.size(), 2u) << describe(r.trace);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kOutOfMemory));
  EXPECT_EQ(begins[1].trigger, trigger(CaptureTrigger::kCrash));
  EXPECT_EQ(begins[0].index, 0u);
  EXPECT_EQ(begins[1].index, 1u);
  // The first dump holds the whole run up to the failed allocation (the ring
  // is long), the second what came after it: each step once, the last one
  // (after a sleep) in the second.
  EXPECT_EQ(recorded_steps(r.trace), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7})) << describe(r.trace);
  const auto ends = windows(r.trace, CaptureWindowAction::kEnd);
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_LE(ends[0].at_ns, begins[1].at_ns + 1);
  bool last_in_second = false;
  for (const ProcessImage& image : r.trace.images)
    for (const Operation* op : image.copies())
      if (op->bytes == 4096 * 8) last_in_second = op->span.begin_ns >= ends[0].at_ns;
  EXPECT_TRUE(last_in_second) << describe(r.trace);
  int failed = 0;
  for (const ProcessImage& image : r.trace.images)
    for (const auto& m : image.memory)
      if (m.span.result != 0) {
        ++failed;
        EXPECT_LE(m.span.end_ns, windows(r.trace, CaptureWindowAction::kEnd)[0].at_ns);
      }
  EXPECT_EQ(failed, 1);
}

TEST(Ring, StickyDeviceErrorWritesOutTheRing) {
  TempDir dir;
  RingRun r = run(dir, {"--steps", "4", "--end", "sticky"}, {"--ring=30s"}, "sticky.trace",
                  {{"SIMGPU_FAULT_KERNELS", "Relu"}});
  EXPECT_TRUE(r.untraced.exited_with(1)) << r.untraced.describe();
  EXPECT_TRUE(r.traced.exited_with(1)) << r.traced.describe();
  EXPECT_NE(r.traced.out.find("cudaErrorIllegalAddress"), std::string::npos) << r.traced.out;
  const auto begins = windows(r.trace, CaptureWindowAction::kBegin);
  ASSERT_EQ(begins.size(), 1u) << describe(r.trace);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kStickyError));
  EXPECT_EQ(recorded_steps(r.trace), (std::vector<int>{0, 1, 2, 3}));
  // The failing synchronization is in the dump.
  bool illegal_address = false;
  for (const ProcessImage& image : r.trace.images)
    for (const SpanRecord& call : image.spans) illegal_address |= call.span.result == 700;
  EXPECT_TRUE(illegal_address) << describe(r.trace);
}

TEST(Ring, ExitWritesNothingUnlessAsked) {
  TempDir dir;
  RingRun quiet = run(dir, {"--steps", "3"}, {"--ring=30s"}, "quiet.trace");
  EXPECT_TRUE(quiet.traced.exited_with(0)) << quiet.traced.describe();
  EXPECT_TRUE(quiet.trace.images.empty()) << describe(quiet.trace);
  EXPECT_NE(quiet.traced.err.find("--ring-dump-at-exit"), std::string::npos) << quiet.traced.err;

  RingRun asked = run(dir, {"--steps", "3"}, {"--ring=30s", "--ring-dump-at-exit"}, "asked.trace");
  EXPECT_TRUE(asked.traced.exited_with(0)) << asked.traced.describe();
  const auto begins = windows(asked.trace, CaptureWindowAction::kBegin);
  ASSERT_EQ(begins.size(), 1u) << describe(asked.trace);
  EXPECT_EQ(begins[0].trigger, trigger(CaptureTrigger::kExit));
  EXPECT_EQ(recorded_steps(asked.trace), (std::vector<int>{0, 1, 2}));
  // A finished section: the converter reads it as complete.
  const ProcessResult convert = run_proftrace({"convert", asked.path, "-o", dir.path() + "/asked.json"});
  EXPECT_TRUE(convert.exited_with(0)) << convert.describe();
  EXPECT_EQ(convert.err.find("did not finish"), std::string::npos) << convert.err;
}

// Under CUPTI a kernel's activity record comes in later than its launch, so a
// dump's window holds the GPU work of calls the ring let go. That work is
// labelled as launched before the window, never as work no hooked call made;
// and the backend's note, written once when it started, is carried into the
// dump so that `info` still says what timed the GPU.
TEST(Ring, UnderCuptiWorkOfCallsBeforeTheWindowIsLabelledAndTheBackendNamed) {
  TempDir dir;
  RingRun r = run(dir, {"--steps", "400"}, {"--gpu-timing=cupti", "--ring=50ms", "--ring-dump-at-exit"},
                  "cupti.trace");
  ASSERT_TRUE(r.traced.exited_with(0)) << r.traced.describe();
  const std::vector<int> steps = recorded_steps(r.trace);
  ASSERT_FALSE(steps.empty()) << describe(r.trace);
  EXPECT_GT(steps.front(), 0) << "the ring must have let the first steps go";

  const ProcessResult info = run_proftrace({"info", r.path});
  EXPECT_NE(info.out.find("gpu timing: cupti"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("unattributed GPU work (no hooked call launched it): 0"), std::string::npos) << info.out;

  const std::string json = dir.path() + "/cupti.json";
  const ProcessResult convert = run_proftrace({"convert", r.path, "-o", json});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  EXPECT_EQ(convert.err.find("could not be joined"), std::string::npos) << convert.err;
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find("its call is not in the trace"), std::string::npos);
  RecordProperty("launched_before_window",
                 convert.err.find("launched before the first call") != std::string::npos ? "some" : "none");
}

TEST(Ring, BadOptionsAreRefusedBeforeTheProgramRuns) {
  TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--ring=0"}, "--ring"},
      {{"--ring=soon"}, "--ring"},
      {{"--ring=10s", "--ring-size=1k"}, "--ring-size"},
      {{"--ring-size=64M"}, "--ring-size"},
      {{"--ring-dump-at-exit"}, "--ring-dump-at-exit"},
      {{"--ring=10s", "--steps=0:0:1", "--step-range=train_step"}, "--ring"},
      {{"--ring=10s", "--idle"}, "--ring"},
  };
  for (const auto& [options, named] : cases) {
    const std::string marker = dir.path() + "/ran";
    const ProcessResult r =
        testing::run_process(traced(dir.path() + "/bad.trace", {"/bin/sh", "-c", "touch " + marker}, options));
    EXPECT_TRUE(r.exited_with(2)) << r.describe();
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_NE(access(marker.c_str(), F_OK), 0) << "the program ran despite " << options[0];
  }
}

}  // namespace
}  // namespace proflaunch::e2e
