// The events convert writes for Kineto's readers (timeline/kineto_slices.cpp,
// tools/README.md "Kineto compatibility"), on hand-built traces: each
// synchronization as a cuda_sync event named and argued as CUPTI's record
// would be, and the steps of the loop as ProfilerStep#N.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;

constexpr uint64_t kStart = 5'000'000'000;
constexpr uint64_t kKernelA = 0xA00, kKernelB = 0xB00;
constexpr uint64_t kStream = 0x5000, kEvent = 0xE000;

SynchronizeRecord sync(const TracedProcess& p, uint64_t correlation, uint64_t begin, uint64_t end, SyncTarget target,
                       uint64_t stream = 0, uint64_t event = 0, int32_t result = 0) {
  SynchronizeRecord record{};
  record.span = ApiSpan{begin, end, correlation, result, p.sync_api, 0};
  record.target = static_cast<uint8_t>(target);
  record.stream = stream;
  record.event = event;
  record.context = 0xC0;
  return record;
}

std::map<std::string, const JsonValue*> cuda_syncs_by_kind(const ConvertedTrace& out) {
  std::map<std::string, const JsonValue*> by_kind;
  for (const JsonValue* e : out.with_phase('X', "cuda_sync")) by_kind[(*e)["name"].str()] = e;
  return by_kind;
}

TEST(KinetoSlices, EachSynchronizationIsACudaSyncEventBesideTheGpuWork) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.function(p.section, kKernelA, "a");
  trace.event(p.section, 10, launch(p, 1, kStart + 100, kStart + 150, kKernelA, kStream));
  // cudaEventRecord(kEvent, kStream): the call the event waits point back to.
  ApiCallRecord record{};
  record.span = ApiSpan{kStart + 200, kStart + 210, 2, 0, p.malloc_api, 0};
  record.event = kEvent;
  record.stream = kStream;
  trace.event(p.section, 10, record);
  trace.event(p.section, 10, sync(p, 3, kStart + 300, kStart + 900, SyncTarget::kDevice));
  trace.event(p.section, 10, sync(p, 4, kStart + 1000, kStart + 1100, SyncTarget::kStream, kStream));
  trace.event(p.section, 10, sync(p, 5, kStart + 1200, kStart + 1300, SyncTarget::kEvent, 0, kEvent));
  trace.event(p.section, 10, sync(p, 6, kStart + 1400, kStart + 1450, SyncTarget::kStreamWaitEvent, kStream, kEvent));
  // No CUPTI counterpart: an implicit wait inside a blocking copy, and a
  // synchronization that failed.
  trace.event(p.section, 10, sync(p, 7, kStart + 1500, kStart + 1600, SyncTarget::kImplicit));
  trace.event(p.section, 10, sync(p, 8, kStart + 1700, kStart + 1800, SyncTarget::kDevice, 0, 0, 700));
  trace.event(p.section, 99, activity(1, kStart + 400, kStart + 800, kStream, GpuActivityKind::kKernel));

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto syncs = cuda_syncs_by_kind(out);
  ASSERT_EQ(syncs.size(), 4u) << out.json_text;
  ASSERT_EQ(out.with_phase('X', "cuda_sync").size(), 4u) << "the implicit and the failed one are left out";

  const JsonValue& context = *syncs.at("Context Sync");
  EXPECT_EQ(context["args"]["stream"].as_int(), -1) << "CUPTI's stream of a context sync is invalid";
  EXPECT_EQ(context["args"]["correlation"].as_uint(), 3u);
  EXPECT_EQ(context["args"]["cuda_sync_kind"].str(), "Context Sync");
  EXPECT_EQ(context["dur"].str(), "0.600") << "the host call's span";
  EXPECT_GE(context["pid"].as_uint(), tools::timeline::kGpuPidBase) << "beside the GPU's work, in its process";
  EXPECT_EQ(out.thread_name(context["pid"].as_uint(), context["tid"].as_uint()).rfind("CUDA syncs", 0), 0u);

  const JsonValue& stream = *syncs.at("Stream Sync");
  EXPECT_GE(stream["args"]["stream"].as_int(), 0);
  const auto kernels = out.with_phase('X', "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const JsonValue& kernel = *kernels.front();
  EXPECT_EQ(stream["args"]["stream"].as_int(), kernel["args"]["stream"].as_int()) << "the kernel's stream id";

  for (const char* kind : {"Event Sync", "Stream Wait Event"}) {
    SCOPED_TRACE(kind);
    const JsonValue& wait = *syncs.at(kind);
    EXPECT_EQ(wait["args"]["wait_on_cuda_event_record_corr_id"].as_uint(), 2u) << "the cudaEventRecord call";
    EXPECT_EQ(wait["args"]["wait_on_stream"].as_int(), kernel["args"]["stream"].as_int());
    EXPECT_EQ(wait["args"]["wait_on_cuda_event_id"].as_uint(), kEvent);
  }
}

TEST(KinetoSlices, AnEventWaitWithoutItsRecordSaysMinusOne) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, sync(p, 1, kStart + 100, kStart + 200, SyncTarget::kEvent, 0, kEvent));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto syncs = cuda_syncs_by_kind(out);
  ASSERT_EQ(syncs.count("Event Sync"), 1u) << out.json_text;
  EXPECT_EQ(syncs.at("Event Sync")->operator[]("args")["wait_on_stream"].as_int(), -1);
  EXPECT_EQ(syncs.at("Event Sync")->operator[]("args")["wait_on_cuda_event_record_corr_id"].as_int(), -1);
}

// Three iterations of the same kernel sequence: the step detector finds
// the period, and convert writes ProfilerStep#0..2 (numbered from 0, as
// PyTorch's profiler does) on a steps track beside the launching thread.
TEST(KinetoSlices, TheStepsOfTheLoopAreProfilerStepsNumberedFromZero) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.function(p.section, kKernelA, "a");
  trace.function(p.section, kKernelB, "b");
  uint64_t correlation = 1;
  for (int step = 0; step < 3; ++step) {
    const uint64_t at = kStart + 10'000 * step;
    for (uint64_t kernel : {kKernelA, kKernelB}) {
      const uint64_t begin = at + (kernel == kKernelA ? 100 : 3000);
      trace.event(p.section, 10, launch(p, correlation, begin, begin + 50, kernel, kStream));
      trace.event(p.section, 99, activity(correlation, begin + 500, begin + 2000, kStream, GpuActivityKind::kKernel));
      ++correlation;
    }
  }
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::vector<const JsonValue*> steps;
  for (const JsonValue* e : out.with_phase('X', "user_annotation"))
    if ((*e)["name"].str().rfind("ProfilerStep#", 0) == 0) steps.push_back(e);
  ASSERT_EQ(steps.size(), 3u) << out.json_text;
  for (size_t n = 0; n < steps.size(); ++n) {
    const JsonValue& step = *steps[n];
    EXPECT_EQ(step["name"].str(), "ProfilerStep#" + std::to_string(n));
    EXPECT_EQ(step["pid"].as_uint(), 10u) << "the traced process's own pid";
    EXPECT_EQ(out.thread_name(10, step["tid"].as_uint()).rfind("Steps: ", 0), 0u);
    EXPECT_TRUE(step["args"].has("step_source"));
  }
  // Each step begins at its first launch.
  EXPECT_EQ((*steps[1])["ts"].str(), "10.100");
  EXPECT_EQ((*steps[2])["ts"].str(), "20.100");
}

}  // namespace
}  // namespace proflaunch::testing
