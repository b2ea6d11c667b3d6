// proftrace stats --section recommendations on hand-built traces: a bad
// training loop where every rule fires with exact evidence (calls, bytes,
// host time, steps, the Python line that made the calls), and a clean one
// with the same shape where none does and the output says so.
#include <gtest/gtest.h>

#include <span>

#include "tests/unit/stacks/synthetic_stacks.h"
#include "tests/unit/tools/json_value.h"
#include "tests/unit/tools/tool_fixture.h"

namespace proflaunch::testing {
namespace {

using namespace format;

constexpr uint64_t kSection = 0x5EC;
constexpr uint32_t kMain = 1;
constexpr uint64_t kT = 1'000'000'000;
constexpr uint64_t kStepNs = 1'000'000;
constexpr int kSteps = 4;

std::span<const uint8_t> text_bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// A loop of kSteps NVTX "train_step" ranges on one thread. Per step: a
// kernel, an upload, a 4-byte download, synchronizations and an
// allocation; `bad` picks whether each is the costly kind.
class LoopTrace {
 public:
  explicit LoopTrace(bool bad) {
    trace_.process(kSection, {.pid = 7, .argv = {"python", "train.py"}});
    SyntheticStacks s(trace_, kSection);
    s.python(1, {{"/home/me/train.py", "upload", 12, true}});
    s.python(2, {{"/home/me/train.py", "log_loss", 20, true}});
    s.python(3, {{"/home/me/train.py", "wait", 30, true}});
    s.python(4, {{"/home/me/train.py", "scratch", 40, true}});
    s.python(5, {{"/home/me/train.py", "forward", 50, true}});
    trace_.device(kSection, DeviceSpec{.ordinal = 0, .name = "Simulated A", .multiprocessor_count = 108});
    trace_.function(kSection, 0xF00, "_Z8tiny_addPff", kT);
    bad_ = bad;
    launch_api_ = trace_.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
    copy_api_ = trace_.api(kSection, bad ? "cudaMemcpy" : "cudaMemcpyAsync", ApiDomain::kRuntime);
    sync_api_ = trace_.api(kSection, "cudaDeviceSynchronize", ApiDomain::kRuntime);
    malloc_api_ = trace_.api(kSection, "cudaMalloc", ApiDomain::kRuntime);
    free_api_ = trace_.api(kSection, "cudaFree", ApiDomain::kRuntime);
    push_api_ = trace_.api(kSection, "nvtxRangePushA", ApiDomain::kAnnotation);
    pop_api_ = trace_.api(kSection, "nvtxRangePop", ApiDomain::kAnnotation);

    for (int step = 0; step < kSteps; ++step) {
      const uint64_t b = kT + uint64_t(step) * kStepNs;
      nvtx(NvtxEventType::kPush, b, push_api_, "train_step");
      kernel(b + 1'000);
      // bad: a synchronous 1 MiB upload from pageable memory, 100 us;
      // clean: an async one from pinned memory.
      copy(b + 10'000, 100'000, 1 << 20, CopyDirection::kHostToDevice,
           bad ? MemoryKind::kPageableHost : MemoryKind::kPinnedHost, !bad, 1);
      // bad: a synchronous 4-byte read into pinned memory every step (10 us);
      // clean: only in the first step.
      if (bad || step == 0) copy(b + 200'000, 10'000, 4, CopyDirection::kDeviceToHost, MemoryKind::kPinnedHost, false, 2);
      // bad: three device syncs of 50 us per step; clean: one after the loop.
      if (bad)
        for (int i = 0; i < 3; ++i) sync(b + 300'000 + uint64_t(i) * 60'000, 50'000);
      // bad: cudaMalloc + cudaFree of 4 KiB (20 us each) every step; clean:
      // only in the first step.
      if (bad || step == 0) {
        memory(b + 600'000, 20'000, 4096, MemoryAction::kAcquire, malloc_api_);
        memory(b + 700'000, 20'000, 0, MemoryAction::kRelease, free_api_);
      }
      nvtx(NvtxEventType::kPop, b + kStepNs - 100, pop_api_, "");
    }
    if (!bad) sync(kT + kSteps * kStepNs + 1'000, 50'000);
    path_ = write_trace(trace_, bad ? "recommendations_bad.trace" : "recommendations_clean.trace");
  }

  const std::string& path() const { return path_; }

 private:
  void nvtx(NvtxEventType type, uint64_t at_ns, uint16_t api, const std::string& name) {
    NvtxEventRecord record{};
    record.type = static_cast<uint8_t>(type);
    record.message_type =
        static_cast<uint8_t>(name.empty() ? NvtxMessageType::kNone : NvtxMessageType::kInline);
    // A push's range begins when the call returns, a pop's ends when it is called.
    record.span = type == NvtxEventType::kPush ? ApiSpan{at_ns - 10, at_ns, 0, 0, api, 0}
                                               : ApiSpan{at_ns, at_ns + 10, 0, 0, api, 0};
    if (name.empty())
      trace_.event(kSection, kMain, record);
    else
      trace_.event_with_tail(kSection, kMain, record, text_bytes(name));
  }
  void kernel(uint64_t at_ns) {
    KernelLaunchRecord record{};
    record.span = ApiSpan{at_ns, at_ns + 5'000, ++correlation_, 0, launch_api_, kApiAsync};
    record.function = 0xF00;
    // bad: one block on a GPU of 108 SMs; clean: 1024 blocks.
    record.grid = bad_ ? Dim3{1, 1, 1} : Dim3{1024, 1, 1};
    record.block = {256, 1, 1};
    trace_.event(kSection, kMain, record);
    stack(5, StackPoint::kLaunch);
    GpuActivityRecord gpu{};
    gpu.correlation_id = correlation_;
    gpu.start_ns = at_ns + 6'000;
    gpu.end_ns = at_ns + 9'000;
    gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace_.event(kSection, 2, gpu);
  }
  void copy(uint64_t at_ns, uint64_t host_ns, uint64_t bytes, CopyDirection direction, MemoryKind host,
            bool async, uint32_t python) {
    MemoryCopyRecord record{};
    record.span = ApiSpan{at_ns, at_ns + host_ns, ++correlation_, 0, copy_api_, uint16_t(async ? kApiAsync : 0)};
    record.bytes = bytes;
    record.direction = static_cast<uint8_t>(direction);
    const bool upload = direction == CopyDirection::kHostToDevice;
    record.src_kind = static_cast<uint8_t>(upload ? host : MemoryKind::kDevice);
    record.dst_kind = static_cast<uint8_t>(upload ? MemoryKind::kDevice : host);
    record.peer_device = -1;
    trace_.event(kSection, kMain, record);
    stack(python, StackPoint::kLaunch);
  }
  void sync(uint64_t at_ns, uint64_t host_ns) {
    SynchronizeRecord record{};
    record.span = ApiSpan{at_ns, at_ns + host_ns, ++correlation_, 0, sync_api_, 0};
    record.target = static_cast<uint8_t>(SyncTarget::kDevice);
    trace_.event(kSection, kMain, record);
    stack(3, StackPoint::kSync);
  }
  void memory(uint64_t at_ns, uint64_t host_ns, uint64_t bytes, MemoryAction action, uint16_t api) {
    MemoryOperationRecord record{};
    record.span = ApiSpan{at_ns, at_ns + host_ns, ++correlation_, 0, api, 0};
    record.address = 0x7000000000;
    record.bytes = bytes;
    record.kind = static_cast<uint8_t>(AllocationKind::kDevice);
    record.action = static_cast<uint8_t>(action);
    record.pool_reserved_bytes = kPoolReservedUnknown;
    trace_.event(kSection, kMain, record);
    stack(4, StackPoint::kMemory);
  }
  void stack(uint32_t python, StackPoint point) {
    CallStackRecord record{};
    record.point = static_cast<uint8_t>(point);
    record.correlation_id = correlation_;
    record.python_stack = python;
    trace_.event(kSection, kMain, record);
  }

  TraceBuilder trace_;
  std::string path_;
  uint16_t launch_api_ = 0, copy_api_ = 0, sync_api_ = 0, malloc_api_ = 0, free_api_ = 0, push_api_ = 0,
           pop_api_ = 0;
  uint64_t correlation_ = 0;
  bool bad_ = false;
};

struct Recommendations {
  CommandOutput text;
  std::map<std::string, JsonValue> rows;  // by rule
};

Recommendations recommendations(const std::string& trace) {
  tools::StatsCommand command;
  command.inputs = {trace};
  command.sections = {"recommendations"};
  Recommendations out;
  out.text = run_stats_on(command);
  command.json = true;
  const CommandOutput json = run_stats_on(command);
  std::string error;
  const auto document = parse_json(json.out, &error);
  EXPECT_TRUE(document.has_value()) << error << "\n" << json.out;
  if (!document) return out;
  for (const JsonValue& table : (*document)["tables"].items)
    if (table["section"].str() == "recommendations")
      for (const JsonValue& row : table["rows"].items) out.rows[row["Rule"].str()] = row;
  return out;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(StatsRecommendations, EveryRuleFiresOnABadLoopWithItsEvidenceAndCallSite) {
  const LoopTrace trace(true);
  const Recommendations r = recommendations(trace.path());
  ASSERT_EQ(r.text.exit_code, 0) << r.text.err;
  ASSERT_EQ(r.rows.size(), 10u) << r.text.out;

  const JsonValue& pageable = r.rows.at("pageable-sync-copy");
  EXPECT_EQ(pageable["Result"].str(), "found");
  EXPECT_EQ(pageable["Calls"].str(), "4");
  EXPECT_EQ(pageable["Bytes"].str(), std::to_string(4 << 20));
  EXPECT_EQ(pageable["Host Time (ns)"].str(), "400000");
  EXPECT_EQ(pageable["Call Sites"].str(), "/home/me/train.py:12 upload (4 calls, 400000 ns)");

  const JsonValue& item = r.rows.at("item-read");
  EXPECT_EQ(item["Result"].str(), "found");
  EXPECT_EQ(item["Calls"].str(), "4");
  EXPECT_EQ(item["Bytes"].str(), "16");
  EXPECT_EQ(item["Host Time (ns)"].str(), "40000");
  EXPECT_EQ(item["Steps"].str(), "4/4");
  EXPECT_EQ(item["Call Sites"].str(), "/home/me/train.py:20 log_loss (4 calls, 40000 ns)");

  const JsonValue& sync = r.rows.at("excessive-sync");
  EXPECT_EQ(sync["Result"].str(), "found");
  EXPECT_EQ(sync["Calls"].str(), "12");
  EXPECT_EQ(sync["Host Time (ns)"].str(), "600000");
  EXPECT_EQ(sync["Steps"].str(), "3.0/step");
  EXPECT_EQ(sync["Call Sites"].str(), "/home/me/train.py:30 wait (12 calls, 600000 ns)");

  const JsonValue& alloc = r.rows.at("steady-state-alloc");
  EXPECT_EQ(alloc["Result"].str(), "found");
  EXPECT_EQ(alloc["Calls"].str(), "6") << "steps 2 to 4: a cudaMalloc and a cudaFree each";
  EXPECT_EQ(alloc["Bytes"].str(), "12288");
  EXPECT_EQ(alloc["Host Time (ns)"].str(), "120000");
  EXPECT_EQ(alloc["Call Sites"].str(), "/home/me/train.py:40 scratch (6 calls, 120000 ns)");

  const JsonValue& grid = r.rows.at("small-grid");
  EXPECT_EQ(grid["Result"].str(), "found");
  EXPECT_EQ(grid["Calls"].str(), "4");
  EXPECT_EQ(grid["GPU Time (ns)"].str(), "12000") << "4 launches of 3 us, all of the kernel time";
  EXPECT_TRUE(has(grid["Finding"].str(), "tiny_add(float*, float) (1 block on 108 SMs, 4 launches, 12000 ns)"))
      << grid["Finding"].str();
  EXPECT_TRUE(has(grid["Finding"].str(), "(100.0% of all kernel time)")) << grid["Finding"].str();
  EXPECT_EQ(grid["Call Sites"].str(), "/home/me/train.py:50 forward (4 launches, 12000 ns GPU)");

  EXPECT_EQ(r.rows.at("launch-bound")["Result"].str(), "nothing found") << "4 kernels, copies between them";
  EXPECT_EQ(r.rows.at("gpu-idle-gap")["Result"].str(), "nothing found") << "997 us between the kernels";
  EXPECT_TRUE(has(r.text.out, "5 of 10 rules found a problem")) << r.text.out;
  EXPECT_TRUE(has(r.text.out, "NVTX range 'train_step'")) << "the overview's steps\n" << r.text.out;
}

TEST(StatsRecommendations, ACleanLoopFiresNothingAndSaysEveryRuleWasChecked) {
  const LoopTrace trace(false);
  const Recommendations r = recommendations(trace.path());
  ASSERT_EQ(r.text.exit_code, 0) << r.text.err;
  ASSERT_EQ(r.rows.size(), 10u) << r.text.out;
  for (const auto& [rule, row] : r.rows) {
    SCOPED_TRACE(rule);
    EXPECT_EQ(row["Result"].str(), "nothing found");
    EXPECT_TRUE(row.has("Call Sites"));
    EXPECT_EQ(row["Call Sites"].type, JsonValue::Type::kNull) << "'-': no call site to show";
  }
  EXPECT_EQ(r.rows.at("pageable-sync-copy")["Calls"].str(), "0") << "pinned async uploads are fine";
  EXPECT_EQ(r.rows.at("item-read")["Steps"].str(), "1/4") << "a read in one step of four is not most steps";
  EXPECT_EQ(r.rows.at("excessive-sync")["Calls"].str(), "0") << "the one sync is after the last step";
  EXPECT_EQ(r.rows.at("steady-state-alloc")["Calls"].str(), "0") << "allocated in the first step only";
  EXPECT_EQ(r.rows.at("small-grid")["Calls"].str(), "0") << "1024 blocks on 108 SMs";
  EXPECT_TRUE(has(r.text.out, "every rule was checked and none found a problem")) << r.text.out;
  EXPECT_TRUE(has(r.text.out, "checked, nothing found: pageable-sync-copy, item-read, excessive-sync, "
                              "steady-state-alloc, small-grid, launch-bound, straggler-rank, exposed-communication, "
                              "gpu-idle-gap, device-state"))
      << r.text.out;
}

// 20 kernels of 2 us on one device, launched from train.py:60, `gap_ns`
// apart (end to start); then one long kernel.
std::string burst_trace(uint64_t gap_ns, const std::string& name) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 8, .argv = {"python", "train.py"}});
  SyntheticStacks s(trace, kSection);
  s.python(6, {{"/home/me/train.py", "tiny_ops", 60, true}});
  const uint16_t launch_api = trace.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
  uint64_t at = kT, correlation = 0;
  auto kernel = [&](uint64_t gpu_ns) {
    KernelLaunchRecord launch{};
    launch.span = ApiSpan{at - 500, at - 100, ++correlation, 0, launch_api, kApiAsync};
    launch.grid = {1024, 1, 1};
    launch.block = {256, 1, 1};
    trace.event(kSection, kMain, launch);
    CallStackRecord stack{};
    stack.point = static_cast<uint8_t>(StackPoint::kLaunch);
    stack.correlation_id = correlation;
    stack.python_stack = 6;
    trace.event(kSection, kMain, stack);
    GpuActivityRecord gpu{};
    gpu.correlation_id = correlation;
    gpu.start_ns = at;
    gpu.end_ns = at + gpu_ns;
    gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace.event(kSection, 2, gpu);
    at += gpu_ns + gap_ns;
  };
  for (int i = 0; i < 20; ++i) kernel(2'000);
  kernel(500'000);
  return write_trace(trace, name);
}

TEST(StatsRecommendations, ShortKernelsWithMoreIdleThanBusyBetweenThemAreLaunchBound) {
  const Recommendations r = recommendations(burst_trace(8'000, "burst_idle.trace"));
  ASSERT_EQ(r.text.exit_code, 0) << r.text.err;
  const JsonValue& row = r.rows.at("launch-bound");
  EXPECT_EQ(row["Result"].str(), "found") << r.text.out;
  EXPECT_EQ(row["Calls"].str(), "20") << "the long kernel ends the stretch and is not in it";
  EXPECT_EQ(row["GPU Time (ns)"].str(), "40000");
  EXPECT_TRUE(has(row["Finding"].str(), "1 stretch of 20 short kernels: the GPU was busy 40000 ns and idle "
                                        "152000 ns"))
      << row["Finding"].str();
  EXPECT_EQ(row["Call Sites"].str(), "/home/me/train.py:60 tiny_ops (20 launches, 40000 ns GPU)");

  const Recommendations busy = recommendations(burst_trace(1'000, "burst_busy.trace"));
  EXPECT_EQ(busy.rows.at("launch-bound")["Result"].str(), "nothing found")
      << "1 us gaps after 2 us kernels: the GPU is busier than idle\n" << busy.text.out;
}

// kSteps NVTX steps of `step_ns` on one thread (tid kMain). Per step from
// its start b: kernel A launched at b+100us (train.py:60) runs [b+0.2ms,
// b+1.2ms); a cudaMalloc (train.py:40) from b+1.5ms for `malloc_ns`; kernel
// B launched 100 us before it runs (train.py:50) at b+1.2ms+gap_ns, until
// 100 us past the step's end, so that the GPU idles only in the one gap.
std::string idle_gap_trace(uint64_t step_ns, uint64_t gap_ns, uint64_t malloc_ns, const std::string& name) {
  TraceBuilder trace;
  trace.process(kSection, {.pid = 9, .argv = {"python", "train.py"}});
  SyntheticStacks s(trace, kSection);
  s.python(4, {{"/home/me/train.py", "scratch", 40, true}});
  s.python(5, {{"/home/me/train.py", "forward", 50, true}});
  s.python(6, {{"/home/me/train.py", "embed", 60, true}});
  const uint16_t launch_api = trace.api(kSection, "cuLaunchKernel", ApiDomain::kDriver);
  const uint16_t malloc_api = trace.api(kSection, "cudaMalloc", ApiDomain::kRuntime);
  uint64_t correlation = 0;
  auto stack = [&](uint32_t python, StackPoint point) {
    CallStackRecord record{};
    record.point = static_cast<uint8_t>(point);
    record.correlation_id = correlation;
    record.python_stack = python;
    trace.event(kSection, kMain, record);
  };
  auto kernel = [&](uint64_t launch_ns, uint64_t start_ns, uint64_t end_ns, uint32_t python) {
    KernelLaunchRecord launch{};
    launch.span = ApiSpan{launch_ns, launch_ns + 10'000, ++correlation, 0, launch_api, kApiAsync};
    launch.grid = {1024, 1, 1};
    launch.block = {256, 1, 1};
    trace.event(kSection, kMain, launch);
    stack(python, StackPoint::kLaunch);
    GpuActivityRecord gpu{};
    gpu.correlation_id = correlation;
    gpu.start_ns = start_ns;
    gpu.end_ns = end_ns;
    gpu.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace.event(kSection, 2, gpu);
  };
  const uint16_t push_api = trace.api(kSection, "nvtxRangePushA", ApiDomain::kAnnotation);
  const uint16_t pop_api = trace.api(kSection, "nvtxRangePop", ApiDomain::kAnnotation);
  for (int step = 0; step < kSteps; ++step) {
    const uint64_t b = kT + uint64_t(step) * step_ns;
    NvtxEventRecord push{};
    push.type = static_cast<uint8_t>(NvtxEventType::kPush);
    push.message_type = static_cast<uint8_t>(NvtxMessageType::kInline);
    push.span = ApiSpan{b - 10, b, 0, 0, push_api, 0};
    trace.event_with_tail(kSection, kMain, push, text_bytes("train_step"));
    kernel(b + 100'000, b + 200'000, b + 1'200'000, 6);
    MemoryOperationRecord malloc{};
    malloc.span = ApiSpan{b + 1'500'000, b + 1'500'000 + malloc_ns, ++correlation, 0, malloc_api, 0};
    malloc.address = 0x7000000000;
    malloc.bytes = 4096;
    malloc.kind = static_cast<uint8_t>(AllocationKind::kDevice);
    malloc.action = static_cast<uint8_t>(MemoryAction::kAcquire);
    malloc.pool_reserved_bytes = kPoolReservedUnknown;
    trace.event(kSection, kMain, malloc);
    stack(4, StackPoint::kMemory);
    const uint64_t b_start = b + 1'200'000 + gap_ns;
    kernel(b_start - 100'000, b_start, b + step_ns + 100'000, 5);
    NvtxEventRecord pop{};
    pop.type = static_cast<uint8_t>(NvtxEventType::kPop);
    pop.span = ApiSpan{b + step_ns - 100, b + step_ns - 90, 0, 0, pop_api, 0};
    trace.event(kSection, kMain, pop);
  }
  return write_trace(trace, name);
}

TEST(StatsRecommendations, GpuIdleGapsNameWhatTheLaunchingThreadDidMeanwhile) {
  // 10 ms steps with a 6.9 ms gap each. cudaMalloc of 3 ms: the thread is
  // longer outside calls (3.5 ms, until B's launch) than in it.
  const Recommendations r = recommendations(idle_gap_trace(10'000'000, 6'900'000, 3'000'000, "gap_outside.trace"));
  ASSERT_EQ(r.text.exit_code, 0) << r.text.err;
  const JsonValue& row = r.rows.at("gpu-idle-gap");
  EXPECT_EQ(row["Result"].str(), "found") << r.text.out;
  EXPECT_EQ(row["Calls"].str(), "4") << "one gap per step; the first A follows no GPU work";
  EXPECT_EQ(row["GPU Time (ns)"].str(), "27600000") << "4 x 6.9 ms of idle GPU";
  EXPECT_EQ(row["Steps"].str(), "4/4");
  EXPECT_TRUE(has(row["Finding"].str(),
                  "the longest, 6.900 ms in step 1 on device 0 of pid 9: the launching thread (tid 1) was outside "
                  "API calls for 3.500 ms of it (CPU work in the program), after cudaMalloc at "
                  "/home/me/train.py:40 scratch and before cuLaunchKernel at /home/me/train.py:50 forward"))
      << row["Finding"].str();
  EXPECT_EQ(row["Call Sites"].str(),
            "outside API calls after cudaMalloc at /home/me/train.py:40 scratch, before cuLaunchKernel at "
            "/home/me/train.py:50 forward (4 gaps, 27600000 ns idle)");

  // cudaMalloc of 4.5 ms: now the call took most of the gap.
  const Recommendations in_call = recommendations(idle_gap_trace(10'000'000, 6'900'000, 4'500'000, "gap_in.trace"));
  const JsonValue& in_row = in_call.rows.at("gpu-idle-gap");
  EXPECT_EQ(in_row["Result"].str(), "found") << in_call.text.out;
  EXPECT_TRUE(has(in_row["Finding"].str(), "was in cudaMalloc at /home/me/train.py:40 scratch for 4.500 ms of it"))
      << in_row["Finding"].str();
  EXPECT_EQ(in_row["Call Sites"].str(), "in cudaMalloc at /home/me/train.py:40 scratch (4 gaps, 27600000 ns idle)");
}

TEST(StatsRecommendations, GpuIdleGapsBelowEitherThresholdAreNotFound) {
  const Recommendations short_gap =
      recommendations(idle_gap_trace(10'000'000, 900'000, 200'000, "gap_short.trace"));
  const JsonValue& a = short_gap.rows.at("gpu-idle-gap");
  EXPECT_EQ(a["Result"].str(), "nothing found") << "0.9 ms: under 1 ms\n" << short_gap.text.out;
  EXPECT_EQ(a["Calls"].str(), "0");

  const Recommendations small_share =
      recommendations(idle_gap_trace(100'000'000, 2'000'000, 200'000, "gap_small_share.trace"));
  const JsonValue& b = small_share.rows.at("gpu-idle-gap");
  EXPECT_EQ(b["Result"].str(), "nothing found") << "2 ms of a 100 ms step: under 5%\n" << small_share.text.out;
  EXPECT_TRUE(has(b["Finding"].str(), "(4 gaps of at least 1.000 ms in the run)")) << b["Finding"].str();
}

TEST(StatsRecommendations, IsOneOfTheDefaultSections) {
  const LoopTrace trace(true);
  tools::StatsCommand command;
  command.inputs = {trace.path()};
  const CommandOutput out = run_stats_on(command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_TRUE(has(out.out, "Recommendations: rules checked")) << out.out;
}

}  // namespace
}  // namespace proflaunch::testing
