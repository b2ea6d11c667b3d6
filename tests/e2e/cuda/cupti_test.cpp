// CUPTI as the GPU-time backend, and a program that uses CUPTI itself.
//
// cupti_user (tests/simgpu/programs) subscribes to the simulated CUPTI and
// enables activity records the way torch.profiler does, before its first
// CUDA call or halfway through its work. Under proflaunch it must get
// exactly what it gets alone (its report is compared line for line), the
// shim must say on stderr that it fell back to events, and the trace must
// still time every operation: by CUPTI before the program took CUPTI, by
// events after.
#include <gtest/gtest.h>

#include <set>

#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

struct Counts {
  size_t cupti = 0, events = 0;
};

Counts sources(const ProcessImage& image) {
  Counts counts;
  for (const Operation& op : image.operations) {
    EXPECT_EQ(op.gpu.size(), 1u) << op.api << " has its GPU time";
    for (const auto& gpu : op.gpu) {
      counts.cupti += gpu.source == static_cast<uint8_t>(format::GpuTimingSource::kCupti);
      counts.events += gpu.source == static_cast<uint8_t>(format::GpuTimingSource::kEvents);
    }
  }
  return counts;
}

void run_both_ways(const std::string& when, Counts* counts, const std::vector<std::string>& more = {}) {
  TempDir dir;
  std::vector<std::string> program = {build_path("CUPTI_USER"), "--subscribe", when, "--launches", "8"};
  program.insert(program.end(), more.begin(), more.end());
  const ProcessResult plain = testing::run_process(untraced(program));
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, plain.out) << "the program's own CUPTI use is unchanged";
  EXPECT_NE(plain.out.find("subscribe=CUPTI_SUCCESS"), std::string::npos) << plain.out;
  EXPECT_NE(run.err.find("the program uses CUPTI itself"), std::string::npos) << run.err;
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  EXPECT_TRUE(trace.images.front().lost.empty());
  *counts = sources(trace.images.front());
  const ProcessResult info = run_proftrace({"info", dir / "x.trace"});
  ASSERT_TRUE(info.exited_with(0)) << info.describe();
  EXPECT_NE(info.out.find("the program uses CUPTI itself"), std::string::npos) << info.out;
}

TEST(CuptiCoexistence, AProgramThatSubscribesFirstKeepsCuptiAndTheTraceUsesEvents) {
  Counts counts;
  run_both_ways("before", &counts);
  EXPECT_EQ(counts.cupti, 0u);
  EXPECT_GE(counts.events, 9u);  // 8 launches and a copy
}

TEST(CuptiCoexistence, AProgramThatSubscribesLaterTakesCuptiOverFromTheShim) {
  Counts counts;
  run_both_ways("after", &counts);
  EXPECT_GE(counts.cupti, 5u) << "the first half: 4 launches and a copy, timed by CUPTI";
  EXPECT_GE(counts.events, 5u) << "the second half, timed by events";
}

// XLA's profiler reaches CUPTI through dlopen + dlsym, past the link: the
// shim's dlsym interception hands it the same entry points, so the program
// still gets CUPTI (it would fail to subscribe otherwise) in both orders.
TEST(CuptiCoexistence, AProgramThatLooksCuptiUpWithDlsymGetsItToo) {
  Counts counts;
  run_both_ways("before", &counts, {"--dlopen"});
  EXPECT_EQ(counts.cupti, 0u);
  run_both_ways("after", &counts, {"--dlopen"});
  EXPECT_GE(counts.cupti, 5u);
  EXPECT_GE(counts.events, 5u);
}

// The program takes CUPTI over while three 400 ms kernels the shim timed
// with CUPTI are still running. Their records go to the program (it enabled
// kernels before they finished, as it would alone); the shim cannot time
// them any more and counts each in a LOST record (GPU timing unresolved).
// Nothing else is lost, and the program's report is unchanged.
TEST(CuptiCoexistence, KernelsInFlightAtTheHandoverAreCountedNotSilentlyLost) {
  TempDir dir;
  const std::vector<std::string> program = {build_path("CUPTI_USER"), "--subscribe", "after", "--launches", "8",
                                            "--in-flight", "3"};
  const ProcessResult plain = testing::run_process(untraced(program));
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, plain.out);
  EXPECT_NE(plain.out.find(" kernels=7 "), std::string::npos) << "the program saw the kernels in flight: " << plain.out;
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  size_t untimed = 0, cupti = 0, events = 0;
  for (const Operation& op : image.operations) {
    if (op.gpu.empty()) ++untimed;
    for (const auto& gpu : op.gpu) {
      cupti += gpu.source == uint8_t(format::GpuTimingSource::kCupti);
      events += gpu.source == uint8_t(format::GpuTimingSource::kEvents);
    }
  }
  EXPECT_EQ(untimed, 3u) << "the three kernels in flight";
  EXPECT_GE(cupti, 5u) << "the first half";
  EXPECT_GE(events, 5u) << "the second half";
  uint64_t unresolved = 0;
  for (const format::LostRecord& lost : image.lost) {
    EXPECT_EQ(lost.reason, uint32_t(format::LostReason::kGpuTimingUnresolved));
    unresolved += lost.count;
  }
  EXPECT_EQ(unresolved, untimed) << "each untimed operation is counted";
}

// Without a usable CUPTI (here the simulated one is off the library path, so
// the shim finds the toolkit's real libcupti, which cannot run without
// NVIDIA's driver) auto falls back to events, says why, and times everything.
TEST(CuptiFallback, AutoWithoutAUsableCuptiTimesWithEventsAndSaysWhy) {
  TempDir dir;
  std::string path = build_path("SIMGPU_LIBRARY_PATH");
  const std::string cupti_dir = ":" + build_path("SIMGPU_CUPTI_DIR");
  const size_t at = path.find(cupti_dir);
  ASSERT_NE(at, std::string::npos) << path;
  path.erase(at, cupti_dir.size());
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STREAM_OPS"), "--launches", "3"}, {}, {{"LD_LIBRARY_PATH", path}}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(run.err.find("GPU timing: events (CUPTI not used: "), std::string::npos) << run.err;
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const Counts counts = sources(trace.images.front());
  EXPECT_EQ(counts.cupti, 0u);
  EXPECT_EQ(counts.events, trace.images.front().operations.size());
  const ProcessResult info = run_proftrace({"info", dir / "x.trace"});
  ASSERT_TRUE(info.exited_with(0)) << info.describe();
  EXPECT_NE(info.out.find("gpu timing: events ("), std::string::npos) << info.out;
}

// hidden_launch launches 3 fills through the runtime and 2 through a
// cuLaunchKernel it found in the driver's own symbol table, past every hook.
// CUPTI still reports the 2: they are recorded as unattributed work on the
// stream the hooked fills used, counted by info and drawn by convert.
TEST(CuptiUnattributed, WorkLaunchedPastTheHooksIsCountedAndDrawnOnItsStream) {
  TempDir dir;
  const std::vector<std::string> program = {build_path("HIDDEN_LAUNCH"), "--hooked", "3", "--hidden", "2"};
  const ProcessResult plain = testing::run_process(untraced(program));
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, plain.out);

  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  std::vector<const Operation*> fills;
  for (const Operation& op : image.operations)
    if (op.kind == OperationKind::kLaunch && op.kernel.find("FillFunctor") != std::string::npos) fills.push_back(&op);
  ASSERT_EQ(fills.size(), 3u) << "only the hooked fills are calls in the trace";
  ASSERT_EQ(image.unattributed.size(), 2u);
  for (const format::UnattributedGpuWorkRecord& work : image.unattributed) {
    EXPECT_EQ(work.kind, uint8_t(format::GpuActivityKind::kKernel));
    EXPECT_EQ(work.source, uint8_t(format::GpuTimingSource::kCupti));
    ASSERT_TRUE(image.strings.count(work.name_string));
    EXPECT_EQ(image.strings.at(work.name_string), fills.front()->kernel);
    EXPECT_TRUE(work.flags & format::kUnattributedStreamKnown) << "matched to the stream the hooked fills used";
    EXPECT_EQ(work.stream, fills.front()->stream);
    ASSERT_EQ(fills.back()->gpu.size(), 1u);
    EXPECT_GE(work.start_ns, fills.back()->gpu.front().end_ns) << "after the hooked fills, on the same stream";
    EXPECT_GT(work.end_ns, work.start_ns);
  }

  const ProcessResult info = run_proftrace({"info", dir / "x.trace"});
  ASSERT_TRUE(info.exited_with(0)) << info.describe();
  EXPECT_NE(info.out.find("unattributed GPU work (no hooked call launched it): 2\n"), std::string::npos) << info.out;

  const ProcessResult convert = run_proftrace({"convert", dir / "x.trace", "-o", dir / "x.json"});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  EXPECT_NE(convert.err.find("2 GPU operations were launched by a path the hooks do not see"), std::string::npos)
      << convert.err;
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(dir / "x.json", &json, &error)) << error;
  std::set<std::pair<int64_t, int64_t>> fill_tracks;
  for (const JsonValue* slice : json.slices("kernel"))
    if ((*slice)["name"].str().find("FillFunctor") != std::string::npos && !(*slice)["args"].has("unattributed"))
      fill_tracks.insert({(*slice)["pid"].as_int(), (*slice)["tid"].as_int()});
  ASSERT_EQ(fill_tracks.size(), 1u);
  int drawn = 0;
  // Kernels whatever launched them (Kineto's "kernel"), marked unattributed.
  for (const JsonValue* slice : json.slices("kernel")) {
    if (!(*slice)["args"].has("unattributed")) continue;
    ++drawn;
    EXPECT_EQ((*slice)["name"].str().rfind("unattributed launch: void simtorch::vectorized_elementwise_kernel<4, "
                                           "simtorch::FillFunctor<float>", 0), 0u) << (*slice)["name"].str();
    EXPECT_EQ(fill_tracks.count({(*slice)["pid"].as_int(), (*slice)["tid"].as_int()}), 1u) << "on the fills' stream";
  }
  EXPECT_EQ(drawn, 2);
}

// The events backend times what the hooks see and nothing else: the hidden
// launches are invisible to it, and nothing claims otherwise.
TEST(CuptiUnattributed, EventsCannotSeeWorkLaunchedPastTheHooks) {
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("HIDDEN_LAUNCH"), "--hooked", "3", "--hidden", "2"}, {"--gpu-timing=events"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  EXPECT_TRUE(trace.images.front().unattributed.empty());
  EXPECT_EQ(trace.images.front().gpu_activities.size(), trace.images.front().operations.size());
}

}  // namespace
}  // namespace proflaunch::e2e
