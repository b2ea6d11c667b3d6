// GPU timing, with each backend (events: driver events around each
// operation; cupti: the simulated CUPTI's activity records, joined through
// CUPTI correlation ids): every launch, copy and memset has exactly one
// GpuActivity joined by correlation id, from that backend, on its stream and
// device, starting after its API call began, and kernels last as long as the
// simulator modelled them. With --gpu-timing=none there is no
// GpuActivity and every API record is still there.
//
// The programs exit right after their last synchronous call, and the
// simulated driver shuts down at exit from an atexit handler cuInit
// registered, as NVIDIA's does (an H200 lost every event timing of such a
// program before the shim resolved them ahead of that teardown): "no
// operation lost" below checks that.
#include <gtest/gtest.h>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr char kTimedKernel[] = "_Z16e2e_timed_kernelPfi";
constexpr uint64_t kModelledNs = 10'000'000;
// Two events per operation are read as float milliseconds: sub-microsecond
// rounding. The upper bound is generous (a loaded machine), and still far
// below what a broken measurement (host time, queueing) would give.
constexpr uint64_t kSlackNs = 1'000'000;
constexpr uint64_t kClockMappingSlackNs = 5'000;
// More than the error of the GPU-to-host clock mapping on a loaded machine.
constexpr uint64_t kClockErrorNs = 1'000'000;

// Events bracket an operation: the start event is timestamped when the
// stream reaches it. On an idle stream that is before the kernel itself is
// submitted, so a host delay between the two (preemption on a busy machine)
// stretches the measured duration; real GPUs behave the same. Only an
// operation submitted while its stream was still busy with earlier work is
// measured exactly: its upper bound is checked, the lower bound always.
bool submitted_while_stream_busy(const ProcessImage& image, const Operation& op) {
  for (const Operation& other : image.operations) {
    if (&other == &op || other.stream != op.stream || other.gpu.empty()) continue;
    if (other.gpu.front().start_ns < op.gpu.front().start_ns &&
        other.gpu.front().end_ns > op.span.end_ns + kClockErrorNs)
      return true;
  }
  return false;
}

format::GpuActivityKind activity_kind(OperationKind kind) {
  switch (kind) {
    case OperationKind::kLaunch: return format::GpuActivityKind::kKernel;
    case OperationKind::kCopy: return format::GpuActivityKind::kMemoryCopy;
    default: return format::GpuActivityKind::kMemorySet;
  }
}

format::GpuTimingSource source_of(const std::string& backend) {
  return backend == "cupti" ? format::GpuTimingSource::kCupti : format::GpuTimingSource::kEvents;
}

// What holds for every operation of any traced run timed by `source`.
void expect_joined_gpu_activity(const ProcessImage& image, format::GpuTimingSource source) {
  for (const Operation& op : image.operations) {
    ASSERT_EQ(op.gpu.size(), 1u) << op.api << " " << op.kernel << " correlation " << op.span.correlation_id;
    const format::GpuActivityRecord& gpu = op.gpu.front();
    EXPECT_EQ(gpu.kind, static_cast<uint8_t>(activity_kind(op.kind))) << op.api;
    EXPECT_EQ(gpu.source, static_cast<uint8_t>(source)) << op.api;
    EXPECT_EQ(gpu.stream, op.stream) << op.api;
    EXPECT_EQ(gpu.device, op.device) << op.api;
    EXPECT_GE(gpu.start_ns, op.span.begin_ns) << op.api << ": the GPU started before the call was made";
    EXPECT_GE(gpu.end_ns, gpu.start_ns) << op.api;
  }
  // Nothing the GPU did is left without its call.
  EXPECT_EQ(image.gpu_activities.size(), image.operations.size());
  EXPECT_TRUE(image.lost.empty());
}

class GpuTimingBackend : public ::testing::TestWithParam<std::string> {
 protected:
  std::vector<std::string> launcher_args() const { return {"--gpu-timing=" + GetParam()}; }
  format::GpuTimingSource source() const { return source_of(GetParam()); }
};

TEST_P(GpuTimingBackend, KernelsTakeTheirModelledTimeAndEveryOperationIsJoined) {
  TempDir dir;
  const int launches = 4;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STREAM_OPS"), "--launches", std::to_string(launches)}, launcher_args(),
             {{"SIMGPU_KERNEL_COSTS", std::string(kTimedKernel) + "=10ms"}}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  ASSERT_EQ(image.operations.size(), static_cast<size_t>(launches + 5)) << describe(trace);
  expect_joined_gpu_activity(image, source());
  int timed = 0, exact = 0;
  uint64_t previous_end_ns = 0;
  for (const Operation* launch : image.launches()) {
    ASSERT_EQ(launch->kernel, kTimedKernel);
    ASSERT_EQ(launch->gpu.size(), 1u);
    const uint64_t duration_ns = launch->gpu.front().end_ns - launch->gpu.front().start_ns;
    EXPECT_GE(duration_ns, kModelledNs * 95 / 100);
    if (submitted_while_stream_busy(image, *launch)) {
      EXPECT_LT(duration_ns, kModelledNs + kSlackNs);
      ++exact;
    }
    // Queued back to back on one stream: each starts where the last ended,
    // within the GPU clock mapping's error (about 1 us; 1.5 us was seen
    // under AddressSanitizer with the CI's other tests running, 3.7 us
    // elsewhere: docs/limits.md). Work not queued behind a 10 ms
    // kernel would start milliseconds early. CUPTI's records need no
    // mapping and keep their order exactly (the simulated CUPTI once mapped
    // each record on its own and did not: issue 40, item 11).
    const uint64_t slack_ns = GetParam() == "cupti" ? 0 : kClockMappingSlackNs;
    if (previous_end_ns != 0) {
      EXPECT_GE(launch->gpu.front().start_ns + slack_ns, previous_end_ns);
    }
    previous_end_ns = launch->gpu.front().end_ns;
    ++timed;
  }
  EXPECT_EQ(timed, launches);
  // All but the first are queued behind a 10 ms kernel unless the launching
  // thread was preempted for longer than that (a loaded CI machine): the
  // bound above was checked on one at least.
  EXPECT_GE(exact, 1);
}

// GPU and host times share one clock (host CLOCK_MONOTONIC; the simulated
// device's clock is that clock too): work submitted to an idle stream
// starts on the GPU while the asynchronous call that submitted it runs, so
// its GPU start lies inside that call's span, up to float rounding of event
// times. A mapping that puts GPU times late (or early) by the host's
// wake-up latency, tens of microseconds at least, fails this.
TEST_P(GpuTimingBackend, WorkOnAnIdleStreamStartsWithinTheCallThatSubmittedIt) {
  constexpr uint64_t kRoundingNs = 1000;
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STREAM_OPS"), "--launches", "2"}, launcher_args(),
             {{"SIMGPU_KERNEL_COSTS", std::string(kTimedKernel) + "=1ms"}}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  // The first launch follows a blocking cudaMemcpy: the stream is idle.
  ASSERT_GE(image.operations.size(), 2u);
  ASSERT_EQ(image.operations[0].api, "cudaMemcpy");
  const Operation& launch = image.operations[1];
  ASSERT_EQ(launch.kernel, kTimedKernel);
  ASSERT_EQ(launch.gpu.size(), 1u);
  EXPECT_EQ(launch.gpu.front().source, static_cast<uint8_t>(source()));
  EXPECT_GE(launch.gpu.front().start_ns + kRoundingNs, launch.span.begin_ns);
  EXPECT_LE(launch.gpu.front().start_ns, launch.span.end_ns + kRoundingNs)
      << "the GPU start is " << launch.gpu.front().start_ns - launch.span.end_ns
      << " ns after the launch call returned";
}

TEST_P(GpuTimingBackend, TrainingLoopKernelsMatchTheCostsTheProgramSet) {
  TempDir dir;
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {build_path("TRAINING_LOOP"), "--steps", "2"}, launcher_args()));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  expect_joined_gpu_activity(image, source());
  // The costs training_loop gives its kernels (training_loop.cpp,
  // set_kernel_costs), by kernel name.
  const std::pair<const char*, uint64_t> costs[] = {
      {"FillFunctor", 10'000},         {"ReluFunctor", 20'000},
      {"ThresholdBackwardFunctor", 25'000}, {"cross_entropy", 40'000},
      {"AdamFunctor", 300'000},        {"ampere_sgemm_128x64_nn", 1'200'000},
      {"ampere_sgemm_128x64_tn", 1'000'000}, {"ampere_sgemm_128x64_nt", 2'000'000},
  };
  int checked = 0, exact = 0;
  for (const Operation* launch : image.launches()) {
    for (const auto& [fragment, modelled_ns] : costs) {
      if (launch->kernel.find(fragment) == std::string::npos || launch->gpu.empty()) continue;
      const uint64_t duration_ns = launch->gpu.front().end_ns - launch->gpu.front().start_ns;
      EXPECT_GE(duration_ns, modelled_ns * 95 / 100) << launch->kernel;
      if (submitted_while_stream_busy(image, *launch)) {
        EXPECT_LT(duration_ns, modelled_ns + kSlackNs) << launch->kernel;
        ++exact;
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * 8);
  // A step is queued in well under a millisecond and runs for about 5 ms:
  // most kernels wait behind the GEMMs.
  EXPECT_GE(exact, checked / 2);
}

// Single kernels on idle streams, as small programs launch them; the first
// launch loads the module lazily inside its call (5 ms here). Without an
// activity API, such a kernel's start event completes when the call begins:
// the first kernel read 5.5 ms for 0.5 ms before the events backend dated a
// long launch call's work from its return (docs/limits.md).
TEST_P(GpuTimingBackend, SingleKernelsOnIdleStreamsTakeTheirModelledTimeFirstLaunchIncluded) {
  constexpr uint64_t kKernelNs = 500'000;
  constexpr uint64_t kModuleLoadNs = 5'000'000;
  TempDir dir;
  const int repeats = 2, threads = 2;
  const ProcessResult run = testing::run_process(traced(
      dir / "x.trace",
      {build_path("IDLE_LAUNCHES"), "--repeats", std::to_string(repeats), "--threads", std::to_string(threads)},
      launcher_args(),
      {{"SIMGPU_KERNEL_COSTS", "*=" + std::to_string(kKernelNs / 1000) + "us"},
       {"SIMGPU_MODULE_LOAD_NS", std::to_string(kModuleLoadNs)},
       {"CUDA_MODULE_LOADING", "LAZY"}}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  ASSERT_EQ(run.out, "idle_launches: ok\n");
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  expect_joined_gpu_activity(image, source());
  int checked = 0;
  bool saw_module_load = false;
  for (const Operation* launch : image.launches()) {
    SCOPED_TRACE(launch->kernel + " launched in " + std::to_string(launch->span.end_ns - launch->span.begin_ns) +
                 " ns");
    saw_module_load = saw_module_load || launch->span.end_ns - launch->span.begin_ns >= kModuleLoadNs;
    ASSERT_EQ(launch->gpu.size(), 1u);
    const uint64_t duration_ns = launch->gpu.front().end_ns - launch->gpu.front().start_ns;
    // Within 2x either way: events are off by the launch call's head or
    // tail, microseconds, and never by the module load. Only above: a kernel
    // that ended before its launch call returned (the call preempted after
    // it submitted, on a loaded machine) has an end event that completed at
    // once, and no event says when it began (docs/gpu-time.md).
    EXPECT_LE(duration_ns, 2 * kKernelNs);
    const bool ended_inside_its_call = launch->gpu.front().end_ns < launch->span.end_ns + kKernelNs / 10;
    // Nor when the call was long for another reason than the module load
    // (preempted after it submitted: 0.47 ms once under load): the long-call
    // rule starts its kernel at the call's return, though it began inside
    // the call, so up to the call's length is cut (docs/gpu-time.md).
    const uint64_t call_ns = launch->span.end_ns - launch->span.begin_ns;
    const bool preempted_call = call_ns > kKernelNs / 10 && call_ns < kModuleLoadNs;
    if (GetParam() == "cupti" || (!ended_inside_its_call && !preempted_call)) EXPECT_GE(duration_ns, kKernelNs / 2);
    else if (preempted_call && call_ns < kKernelNs) EXPECT_GE(duration_ns, (kKernelNs - call_ns) / 2);
    ++checked;
  }
  EXPECT_EQ(checked, 4 * (1 + repeats) + threads * repeats);
  EXPECT_TRUE(saw_module_load) << "no launch call loaded the module: nothing was measured";
}

INSTANTIATE_TEST_SUITE_P(Backends, GpuTimingBackend, ::testing::Values("events", "cupti"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The trace names the backend that timed it when it was asked for by name,
// events as well as CUPTI (proftrace info; validate.sh reads that line).
TEST_P(GpuTimingBackend, InfoNamesTheBackendAskedFor) {
  TempDir dir;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STREAM_OPS"), "--launches", "2"}, launcher_args()));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult info = run_proftrace({"info", dir / "x.trace"});
  ASSERT_TRUE(info.exited_with(0)) << info.describe();
  EXPECT_NE(info.out.find("gpu timing: " + GetParam() + "\n"), std::string::npos) << info.out;
}

TEST(GpuTiming, NoneRecordsNoGpuActivityButEveryCall) {
  TempDir dir;
  const int launches = 5;
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path("STREAM_OPS"), "--launches", std::to_string(launches)},
             {"--gpu-timing=none"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  EXPECT_TRUE(image.gpu_activities.empty());
  EXPECT_TRUE(image.lost.empty());
  EXPECT_EQ(image.launch_count(kTimedKernel), launches);
  EXPECT_EQ(image.copies().size(), 3u);
  EXPECT_EQ(image.sets().size(), 2u);
  EXPECT_EQ(image.syncs().size(), 1u);  // cudaStreamSynchronize(0)
  ASSERT_TRUE(image.end.has_value());
  EXPECT_EQ(image.end->records_dropped, 0u);
}

}  // namespace
}  // namespace proflaunch::e2e
