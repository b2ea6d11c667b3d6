// proftrace convert on hand-built traces: what lands where in the Perfetto
// JSON, and that the result passes the importer-rule checker.
#include <gtest/gtest.h>

#include <span>

#include <map>
#include <set>

#include "tests/unit/tools/tool_fixture.h"
#include "tests/unit/tools/trace_scenarios.h"
#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::testing {
namespace {

using namespace proflaunch::format;
using tools::timeline::kGpuPidBase;
using tools::timeline::kLinuxPidLimit;

constexpr uint64_t kStart = 5'000'000'000;  // the process's monotonic start: the timeline's 0
constexpr uint64_t kKernel = 0xF00;

void expect_checker_accepts(const ConvertedTrace& converted, bool gpu_invariants = true) {
  std::string output;
  EXPECT_EQ(run_checker(converted.json_path, &output, gpu_invariants), 0) << output;
}

TEST(Convert, LaunchBecomesAnApiSliceAGpuSliceAndAFlowBetweenThem) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x51, 4321, kStart);
  trace.function(p.section, kKernel, "_Z5scaleIfEvPT_i");
  trace.thread(p.section, 4322, "worker");
  ObjectLifecycleRecord created{};
  created.span = ApiSpan{kStart + 100, kStart + 200, 1, 0, p.stream_create_api, 0};
  created.handle = 0xABC;
  created.id = 13;
  created.object = static_cast<uint8_t>(ObjectKind::kStream);
  created.action = static_cast<uint8_t>(LifecycleAction::kCreate);
  trace.event(p.section, 4322, created);
  trace.event(p.section, 4322, launch(p, 7, kStart + 1000, kStart + 3500, kKernel, 0xABC));
  trace.event(p.section, 9999, activity(7, kStart + 5000, kStart + 12345, 0xABC, GpuActivityKind::kKernel));

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;

  const JsonValue* api = out.slice_named("cuLaunchKernel");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ((*api)["cat"].str(), "cuda_driver");
  EXPECT_EQ((*api)["pid"].as_uint(), 4321u);
  EXPECT_EQ((*api)["tid"].as_uint(), 4322u);
  EXPECT_EQ((*api)["ts"].str(), "1.000");
  EXPECT_EQ((*api)["dur"].str(), "2.500");
  EXPECT_TRUE((*api)["flow_out"].boolean);
  const JsonValue& args = (*api)["args"];
  EXPECT_EQ(args["kernel"].str(), "void scale<float>(float*, int)");
  EXPECT_EQ(dim3_of(args["grid"]), (std::vector<uint64_t>{64, 2, 1}));
  EXPECT_EQ(dim3_of(args["block"]), (std::vector<uint64_t>{256, 1, 1}));
  EXPECT_EQ(args["shared_bytes"].as_uint(), 1024u);
  EXPECT_EQ(args["target_stream"].str(), "13");
  EXPECT_FALSE(args.has("stream")) << "on a host slice `stream` would mark it as GPU work for HTA";
  EXPECT_EQ(args["device"].as_int(), 0);
  EXPECT_EQ(args["correlation"].as_uint(), 7u);
  EXPECT_FALSE(args.has("result")) << "result is shown only for failed calls";

  const JsonValue* gpu = out.slice_named("void scale<float>(float*, int)");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ((*gpu)["cat"].str(), "kernel");
  EXPECT_GE((*gpu)["pid"].as_uint(), kLinuxPidLimit);
  EXPECT_EQ((*gpu)["ts"].str(), "5.000");
  EXPECT_EQ((*gpu)["dur"].str(), "7.345");
  EXPECT_TRUE((*gpu)["flow_in"].boolean);
  EXPECT_EQ((*gpu)["bind_id"].as_uint(), (*api)["bind_id"].as_uint());
  EXPECT_EQ((*gpu)["args"]["correlation"].as_uint(), 7u);
  EXPECT_EQ((*gpu)["args"]["stream"].as_uint(), 13u) << "the driver's stream id, as CUPTI's streamId";

  EXPECT_EQ(out.process_name(4321), "python train.py");
  EXPECT_EQ(out.thread_name(4321, 4322), "worker");
  EXPECT_EQ(out.process_name((*gpu)["pid"].as_uint()).rfind("GPU 0", 0), 0u)
      << out.process_name((*gpu)["pid"].as_uint());
  EXPECT_EQ(out.thread_name((*gpu)["pid"].as_uint(), (*gpu)["tid"].as_uint()), "Stream 13 (pid 4321)");
  expect_checker_accepts(out);
}

TEST(Convert, FailedCallsCarryTheirResult) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  auto failed = launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy);
  failed.span.result = 700;
  trace.event(p.section, 10, failed);
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const JsonValue* api = out.slice_named("cuLaunchKernel");
  ASSERT_NE(api, nullptr);
  EXPECT_EQ((*api)["args"]["result"].as_int(), 700);
  EXPECT_EQ((*api)["args"]["kernel"].str(), "unknown kernel") << "no FunctionDef for the handle";
}

TEST(Convert, CopiesAndMemsetsShowBytesAndBandwidthFromTheGpuDuration) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, copy(p, 1, kStart + 100, kStart + 200, 2'000'000, kStreamLegacy));
  trace.event(p.section, 10, memset(p, 2, kStart + 300, kStart + 400, 4096, kStreamLegacy));
  // 2,000,000 bytes in 1,000 ns = 2000 GB/s; 4096 bytes in 2048 ns = 2 GB/s.
  trace.event(p.section, 10, activity(1, kStart + 1000, kStart + 2000, kStreamLegacy, GpuActivityKind::kMemoryCopy));
  trace.event(p.section, 10, activity(2, kStart + 3000, kStart + 5048, kStreamLegacy, GpuActivityKind::kMemorySet));

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const JsonValue* memcpy_slice = out.slice_named("Memcpy HtoD");
  ASSERT_NE(memcpy_slice, nullptr);
  EXPECT_EQ((*memcpy_slice)["cat"].str(), "gpu_memcpy");
  EXPECT_EQ((*memcpy_slice)["args"]["bytes"].as_uint(), 2'000'000u);
  EXPECT_DOUBLE_EQ((*memcpy_slice)["args"]["memory bandwidth (GB/s)"].as_double(), 2000.0);
  EXPECT_EQ((*memcpy_slice)["args"]["src_kind"].str(), "pinned");
  EXPECT_EQ((*memcpy_slice)["args"]["dst_kind"].str(), "device");
  const JsonValue* memset_slice = out.slice_named("Memset");
  ASSERT_NE(memset_slice, nullptr);
  EXPECT_EQ((*memset_slice)["cat"].str(), "gpu_memset");
  EXPECT_DOUBLE_EQ((*memset_slice)["args"]["memory bandwidth (GB/s)"].as_double(), 2.0);
  // The legacy default stream has no driver id in the trace: one of our own,
  // the same for both.
  EXPECT_GT((*memset_slice)["args"]["stream"].as_uint(), uint64_t{1} << 32);
  EXPECT_EQ((*memset_slice)["args"]["stream"].as_uint(), (*memcpy_slice)["args"]["stream"].as_uint());

  const JsonValue* copy_api = out.slice_named("cudaMemcpyAsync");
  ASSERT_NE(copy_api, nullptr);
  EXPECT_EQ((*copy_api)["cat"].str(), "cuda_runtime");
  EXPECT_EQ((*copy_api)["args"]["bytes"].as_uint(), 2'000'000u);
  EXPECT_EQ((*copy_api)["args"]["direction"].str(), "HtoD");
  EXPECT_EQ((*copy_api)["args"]["target_stream"].str(), "legacy default");
  expect_checker_accepts(out);
}

TEST(Convert, TwoProcessesAndTwoDevicesGetTheirOwnProcessesAndStreamTracks) {
  TraceBuilder trace;
  const TracedProcess a = add_process(trace, 0xA, 100, kStart, "node1", "python a.py");
  const TracedProcess b = add_process(trace, 0xB, 200, kStart + 50, "node1", "python b.py");
  DeviceSpec gpu0;
  gpu0.ordinal = 0;
  gpu0.name = "H100";
  gpu0.uuid[0] = 0xAA;
  DeviceSpec gpu1 = gpu0;
  gpu1.ordinal = 1;
  gpu1.uuid[0] = 0xBB;
  trace.device(a.section, gpu0);
  trace.device(b.section, gpu0);  // the same physical GPU seen by both processes
  trace.device(b.section, gpu1);
  trace.function(a.section, kKernel, "_Z1kv");
  trace.function(b.section, kKernel, "_Z1kv");

  uint64_t id = 1;
  auto run = [&](const TracedProcess& p, uint32_t tid, uint64_t stream, int32_t device, uint64_t at) {
    trace.event(p.section, tid, launch(p, id, at, at + 10, kKernel, stream, device));
    trace.event(p.section, tid, activity(id, at + 20, at + 30, stream, GpuActivityKind::kKernel, device));
    ++id;
  };
  run(a, 100, kStreamLegacy, 0, kStart + 1000);
  run(a, 100, 0x5555, 0, kStart + 2000);
  run(b, 201, kStreamPerThread, 0, kStart + 3000);
  run(b, 202, kStreamPerThread, 0, kStart + 4000);
  run(b, 201, 0x7777, 1, kStart + 5000);

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;

  std::map<uint64_t, std::set<std::string>> tracks_by_gpu;
  std::set<uint64_t> flow_ids;
  for (const JsonValue* slice : out.gpu_slices()) {
    const uint64_t pid = (*slice)["pid"].as_uint();
    tracks_by_gpu[pid].insert(out.thread_name(pid, (*slice)["tid"].as_uint()));
    EXPECT_TRUE(flow_ids.insert((*slice)["bind_id"].as_uint()).second) << "flow ids must be unique";
  }
  ASSERT_EQ(tracks_by_gpu.size(), 2u) << "one GPU process per physical device";
  const std::set<std::string> shared_gpu = {"Default stream (pid 100)", "Stream #1 (pid 100)",
                                            "Per-thread default stream, tid 201 (pid 200)",
                                            "Per-thread default stream, tid 202 (pid 200)"};
  const std::set<std::string> second_gpu = {"Stream #1 (pid 200)"};
  std::set<std::set<std::string>> got;
  for (const auto& [pid, names] : tracks_by_gpu) {
    EXPECT_GE(pid, kGpuPidBase);
    got.insert(names);
    EXPECT_NE(out.process_name(pid).find("(H100) on node1"), std::string::npos) << out.process_name(pid);
  }
  EXPECT_EQ(got, (std::set<std::set<std::string>>{shared_gpu, second_gpu}));
  EXPECT_EQ(flow_ids.size(), 5u);
  EXPECT_EQ(out.process_name(100), "python a.py");
  EXPECT_EQ(out.process_name(200), "python b.py");
  expect_checker_accepts(out);
}

TEST(Convert, WithoutGpuTimingApiSlicesRemainAndNoGpuWorkIsInvented) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  for (uint64_t i = 1; i <= 20; ++i)
    trace.event(p.section, 10, launch(p, i, kStart + i * 100, kStart + i * 100 + 50, kKernel, kStreamLegacy));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.with_phase('X', "cuda_driver").size(), 20u);
  EXPECT_TRUE(out.gpu_slices().empty());
  for (const JsonValue* event : out.events) {
    EXPECT_FALSE(event->has("bind_id"));
    EXPECT_LT((*event)["pid"].as_uint(), kLinuxPidLimit) << "no GPU process without GPU work";
  }
  expect_checker_accepts(out);
}

TEST(Convert, ActivityWrittenBeforeItsLaunchStillJoins) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 99, activity(1, kStart + 500, kStart + 900, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 10, launch(p, 1, kStart + 100, kStart + 200, kKernel, kStreamLegacy));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_TRUE((*gpu[0])["flow_in"].boolean);
  expect_checker_accepts(out);
}

TEST(Convert, JoinWindowBoundsTheWaitAndCountsWhatCouldNotBeJoined) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  // Six launches, then their activities newest first. With a window of 4
  // entries, launches 1 and 2 are pushed out by launches 5 and 6 before any
  // activity arrives: activities 6..3 join, activities 2 and 1 cannot.
  for (uint64_t i = 1; i <= 6; ++i)
    trace.event(p.section, 10, launch(p, i, kStart + i * 100, kStart + i * 100 + 50, kKernel, kStreamLegacy));
  for (uint64_t i = 6; i >= 1; --i)
    trace.event(p.section, 99,
                activity(i, kStart + 5000 + i * 100, kStart + 5050 + i * 100, kStreamLegacy, GpuActivityKind::kKernel));
  tools::ConvertCommand command;
  command.join_window = 4;
  const ConvertedTrace out = convert_trace(trace, command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 6u) << "unjoined GPU work is still shown";
  std::set<uint64_t> joined;
  for (const JsonValue* slice : gpu)
    if (slice->has("bind_id")) joined.insert((*slice)["args"]["correlation"].as_uint());
  EXPECT_EQ(joined, (std::set<uint64_t>{3, 4, 5, 6}));
  EXPECT_EQ(out.with_phase('X', "cuda_driver").size(), 6u);
  EXPECT_NE(out.err.find("2 GPU operations could not be joined"), std::string::npos) << out.err;
  expect_checker_accepts(out);
}

TEST(Convert, EqualCorrelationIdsInDifferentSectionsDoNotCrossJoin) {
  TraceBuilder trace;
  const TracedProcess a = add_process(trace, 0xA, 100, kStart);
  const TracedProcess b = add_process(trace, 0xB, 200, kStart);
  trace.event(a.section, 100, launch(a, 1, kStart + 100, kStart + 200, kKernel, kStreamLegacy));
  trace.event(b.section, 200, launch(b, 1, kStart + 100, kStart + 200, kKernel, kStreamLegacy));
  trace.event(b.section, 299, activity(1, kStart + 300, kStart + 400, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  for (const JsonValue* api : out.with_phase('X', "cuda_driver"))
    EXPECT_EQ(api->has("bind_id"), (*api)["pid"].as_uint() == 200u);
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ((*gpu[0])["args"]["pid"].as_uint(), 200u);
  expect_checker_accepts(out);
}

TEST(Convert, SeveralInputFilesShareOneTimelineWithUniqueFlowIds) {
  TraceBuilder first, second;
  const TracedProcess a = add_process(first, 0xA, 100, kStart);
  const TracedProcess b = add_process(second, 0xB, 200, kStart + 1'000'000);  // starts 1 ms later
  first.event(a.section, 100, launch(a, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
  first.event(a.section, 100, activity(1, kStart + 30, kStart + 40, kStreamLegacy, GpuActivityKind::kKernel));
  second.event(b.section, 200, launch(b, 1, kStart + 1'000'010, kStart + 1'000'020, kKernel, kStreamLegacy));
  second.event(b.section, 200, activity(1, kStart + 1'000'030, kStart + 1'000'040, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out =
      convert_files({write_trace(first, "100.part"), write_trace(second, "200.part")});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto apis = out.with_phase('X', "cuda_driver");
  ASSERT_EQ(apis.size(), 2u);
  std::map<uint64_t, std::string> ts_by_pid;
  std::set<uint64_t> flows;
  for (const JsonValue* api : apis) {
    ts_by_pid[(*api)["pid"].as_uint()] = (*api)["ts"].str();
    flows.insert((*api)["bind_id"].as_uint());
  }
  EXPECT_EQ(ts_by_pid[100], "0.010");
  EXPECT_EQ(ts_by_pid[200], "1000.010");
  EXPECT_EQ(flows.size(), 2u);
  expect_checker_accepts(out);
}

TEST(Convert, PartialOverlapOnOneStreamIsAdjustedSoSlicesNest) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 2, kStart + 30, kStart + 40, kKernel, kStreamLegacy));
  trace.event(p.section, 99, activity(1, kStart + 100, kStart + 200, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(2, kStart + 195, kStart + 300, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 2u);
  const JsonValue& second = (*gpu[1])["args"]["correlation"].as_uint() == 2 ? *gpu[1] : *gpu[0];
  EXPECT_EQ(second["ts"].str(), "0.200");
  EXPECT_EQ(second["dur"].str(), "0.100");
  EXPECT_EQ(second["args"]["start_adjusted_ns"].as_int(), 5);
  expect_checker_accepts(out);
}

TEST(Convert, ConcurrentWorkOnOneStreamGoesToAnExtraLaneInsteadOfBreakingNesting) {
  // Real streams are sequential; broken timing must still give a valid trace
  // that hides nothing.
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 2, kStart + 30, kStart + 40, kKernel, kStreamLegacy));
  trace.event(p.section, 99, activity(1, kStart + 100, kStart + 10'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(2, kStart + 5'000, kStart + 20'000, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 2u);
  std::set<std::string> tracks;
  for (const JsonValue* slice : gpu) {
    tracks.insert(out.thread_name((*slice)["pid"].as_uint(), (*slice)["tid"].as_uint()));
    EXPECT_FALSE((*slice)["args"].has("start_adjusted_ns")) << "times are kept as measured";
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"Default stream (pid 10)", "Default stream (pid 10) overlapping work 1"}));
  // The overlap is the input's (broken timing), shown as it is: the
  // invariant a real trace holds does not hold here.
  expect_checker_accepts(out, /*gpu_invariants=*/false);
}

// Work timed by events meeting CUPTI-timed work on one stream: the two
// clock mappings may differ by a few microseconds (3.17 us in CI). Such an
// overlap moves the later start, saying so, rather than opening a lane.
TEST(Convert, AFewMicrosecondsOfOverlapMoveTheStartInsteadOfOpeningALane) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 2, kStart + 30, kStart + 40, kKernel, kStreamLegacy));
  trace.event(p.section, 99, activity(1, kStart + 100, kStart + 10'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(2, kStart + 6'830, kStart + 20'000, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 2u);
  std::set<std::string> tracks;
  for (const JsonValue* slice : gpu) tracks.insert(out.thread_name((*slice)["pid"].as_uint(), (*slice)["tid"].as_uint()));
  EXPECT_EQ(tracks, (std::set<std::string>{"Default stream (pid 10)"}));
  const JsonValue& second = *gpu[1];
  EXPECT_EQ(second["args"]["start_adjusted_ns"].as_int(), 3170);
  expect_checker_accepts(out);
}

// The same bias on a host function shorter than the overlap (seen in CI:
// 2.4 us of host function mapped 3.25 us early, wholly inside the kernel
// before it): it moves whole, duration kept, and the one after it follows.
TEST(Convert, AShortSliceInsideAFewMicrosecondsOfOverlapMovesWhole) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 2, kStart + 30, kStart + 40, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 3, kStart + 50, kStart + 60, kKernel, kStreamLegacy));
  trace.event(p.section, 99, activity(1, kStart + 100, kStart + 10'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(2, kStart + 6'750, kStart + 9'191, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(3, kStart + 9'191, kStart + 10'402, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 3u);
  std::set<std::string> tracks;
  for (const JsonValue* slice : gpu) tracks.insert(out.thread_name((*slice)["pid"].as_uint(), (*slice)["tid"].as_uint()));
  EXPECT_EQ(tracks, (std::set<std::string>{"Default stream (pid 10)"})) << "no overlapping-work lane";
  std::map<uint64_t, const JsonValue*> by_correlation;
  for (const JsonValue* slice : gpu) by_correlation[(*slice)["args"]["correlation"].as_uint()] = slice;
  const JsonValue& second = *by_correlation.at(2);
  EXPECT_EQ(second["ts"].str(), "10.000") << "starts where the kernel before it ends";
  EXPECT_EQ(second["dur"].str(), "2.441") << "its measured duration";
  EXPECT_EQ(second["args"]["start_adjusted_ns"].as_int(), 3250);
  const JsonValue& third = *by_correlation.at(3);
  EXPECT_EQ(third["ts"].str(), "12.441") << "after the moved one";
  expect_checker_accepts(out);
}

// The other arrival order (seen under ASan: a kernel on an "overlapping
// work" track): the host function's record (events, resolved at once) comes
// before the CUPTI record of the kernel before it (CUPTI's buffers come
// later), and maps 3.7 us into that kernel. The host function's GPU slice
// waits for CUPTI work on its stream that starts after it; then it is the
// one that moves, and the exact kernel keeps its times and its track.
TEST(Convert, AHostFunctionWaitsForTheCuptiWorkBeforeItOnItsStream) {
  for (const bool later_cupti_work : {true, false}) {
    SCOPED_TRACE(later_cupti_work ? "released by the next kernel" : "released at the end");
    TraceBuilder trace;
    const TracedProcess p = add_process(trace, 1, 10, kStart);
    trace.event(p.section, 10, launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
    KernelLaunchRecord host_function = launch(p, 2, kStart + 30, kStart + 40, kKernel, kStreamLegacy);
    host_function.launch_flags = kLaunchHostFunction;
    trace.event(p.section, 10, host_function);
    KernelLaunchRecord callback = launch(p, 4, kStart + 42, kStart + 48, kKernel, kStreamLegacy);
    callback.launch_flags = kLaunchHostFunction;  // cudaStreamAddCallback
    trace.event(p.section, 10, callback);
    trace.event(p.section, 10, launch(p, 3, kStart + 50, kStart + 60, kKernel, kStreamLegacy));
    auto cupti = [](GpuActivityRecord record) {
      record.source = static_cast<uint8_t>(GpuTimingSource::kCupti);
      return record;
    };
    // Both host functions' records first (events, resolved at once; the
    // second says nothing of where CUPTI's records are), then CUPTI's.
    trace.event(p.section, 99, activity(2, kStart + 6'300, kStart + 16'000, kStreamLegacy, GpuActivityKind::kKernel));
    trace.event(p.section, 99, activity(4, kStart + 16'000, kStart + 17'000, kStreamLegacy, GpuActivityKind::kKernel));
    trace.event(p.section, 99, cupti(activity(1, kStart + 100, kStart + 10'000, kStreamLegacy, GpuActivityKind::kKernel)));
    if (later_cupti_work)
      trace.event(p.section, 99, cupti(activity(3, kStart + 20'000, kStart + 30'000, kStreamLegacy, GpuActivityKind::kKernel)));
    const ConvertedTrace out = convert_trace(trace);
    ASSERT_EQ(out.exit_code, 0) << out.err;
    const auto gpu = out.gpu_slices();
    ASSERT_EQ(gpu.size(), later_cupti_work ? 4u : 3u);
    std::set<std::string> tracks;
    std::map<uint64_t, const JsonValue*> by_correlation;
    for (const JsonValue* slice : gpu) {
      tracks.insert(out.thread_name((*slice)["pid"].as_uint(), (*slice)["tid"].as_uint()));
      const JsonValue& args = (*slice)["args"];
      by_correlation[args.has("correlation") ? args["correlation"].as_uint() : args["launch correlation"].as_uint()] = slice;
    }
    EXPECT_EQ(tracks, (std::set<std::string>{"Default stream (pid 10)"})) << "no overlapping-work lane";
    const JsonValue& kernel = *by_correlation.at(1);
    EXPECT_EQ(kernel["ts"].str(), "0.100");
    EXPECT_EQ(kernel["dur"].str(), "9.900");
    EXPECT_FALSE(kernel["args"].has("start_adjusted_ns"));
    const JsonValue& moved = *by_correlation.at(2);
    EXPECT_EQ(moved["cat"].str(), "gpu.host_function");
    EXPECT_EQ(moved["ts"].str(), "10.000");
    EXPECT_EQ(moved["args"]["start_adjusted_ns"].as_int(), 3700);
    EXPECT_EQ(moved["dur"].str(), "6.000") << "the overlap cut from its start, not its end";
    EXPECT_EQ((*by_correlation.at(4))["ts"].str(), "16.000") << "the next host function, after it";
    // Its call still has the arrow to it.
    ASSERT_TRUE(moved.has("bind_id"));
    EXPECT_TRUE(moved["flow_in"].boolean);
    size_t calls_with_that_flow = 0;
    for (const JsonValue* call : out.with_phase('X'))
      if (call->has("flow_out") && (*call)["bind_id"].as_uint() == moved["bind_id"].as_uint()) ++calls_with_that_flow;
    EXPECT_EQ(calls_with_that_flow, 1u);
    expect_checker_accepts(out);
  }
}

TEST(Convert, WorkThatArrivesOutOfTimeOrderStaysOnItsStreamsTrack) {
  // A later kernel's record (CUPTI) comes before an earlier one's (timed by
  // events, resolved later): both fit on the stream's own track.
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.event(p.section, 10, launch(p, 1, kStart + 10, kStart + 20, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 2, kStart + 30, kStart + 40, kKernel, kStreamLegacy));
  trace.event(p.section, 10, launch(p, 3, kStart + 50, kStart + 60, kKernel, kStreamLegacy));
  trace.event(p.section, 99, activity(3, kStart + 9'000, kStart + 10'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(1, kStart + 100, kStart + 5'000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 99, activity(2, kStart + 5'000, kStart + 9'000, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::set<std::string> tracks;
  for (const JsonValue* slice : out.gpu_slices()) {
    tracks.insert(out.thread_name((*slice)["pid"].as_uint(), (*slice)["tid"].as_uint()));
    EXPECT_FALSE((*slice)["args"].has("start_adjusted_ns"));
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"Default stream (pid 10)"}));
  expect_checker_accepts(out);
}

TEST(Convert, ACollectivesKernelStartsAfterItsLaunchAndTheWorkQueuedBeforeIt) {
  // Issue 40, items 3 and 11: an all-reduce whose kernel is timed from the
  // rank's arrival on the stream (the call's begin, 1 us), while the library
  // queued a host function ahead of the kernel (1.5-5 us) and launched the
  // kernel at 2 us. The kernel is drawn from the end of the host function,
  // on the stream's own track, with the arrival as an arg.
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.function(p.section, kKernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  const uint16_t allreduce_api = trace.api(p.section, "ncclAllReduce", ApiDomain::kCollective);
  KernelLaunchRecord host_function = launch(p, 8, kStart + 1'100, kStart + 1'200, kKernel, kStreamLegacy);
  host_function.launch_flags = kLaunchHostFunction;
  trace.event(p.section, 10, host_function);
  trace.event(p.section, 10, launch(p, 7, kStart + 2'000, kStart + 2'100, kKernel, kStreamLegacy));
  CollectiveRecord call{};
  call.span = {.begin_ns = kStart + 1'000, .end_ns = kStart + 2'500, .correlation_id = 7, .api = allreduce_api,
               .flags = kApiAsync};
  call.comm_id = 0xC0;
  call.sequence = 1;
  call.stream = kStreamLegacy;
  call.root = -1;
  call.nranks = 2;
  call.op = static_cast<uint8_t>(CollectiveOp::kAllReduce);
  trace.event(p.section, 10, call);
  trace.event(p.section, 99, activity(8, kStart + 1'500, kStart + 5'000, kStreamLegacy, GpuActivityKind::kHostFunction));
  trace.event(p.section, 99, activity(7, kStart + 1'000, kStart + 9'000, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const JsonValue* kernel = nullptr;
  std::set<std::string> tracks;
  for (const JsonValue* slice : out.gpu_slices()) {
    tracks.insert(out.thread_name((*slice)["pid"].as_uint(), (*slice)["tid"].as_uint()));
    if ((*slice)["cat"].str() == "kernel") kernel = slice;
  }
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ((*kernel)["ts"].str(), "5.000") << "after the host function, so after its own launch too";
  EXPECT_EQ((*kernel)["dur"].str(), "4.000");
  EXPECT_EQ((*kernel)["args"]["since rank arrival (ns)"].as_int(), 4'000);
  EXPECT_FALSE((*kernel)["args"].has("start_adjusted_ns"));
  EXPECT_EQ(tracks, (std::set<std::string>{"Default stream (pid 10)"})) << "no overlapping-work lane";
  expect_checker_accepts(out);
}

TEST(Convert, ACollectivesKernelIsNeverDrawnBeforeItsLaunchCall) {
  // On an idle stream the arrival (1 us) is all the kernel's record has; its
  // launch call began at 2 us.
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.function(p.section, kKernel, "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  const uint16_t allreduce_api = trace.api(p.section, "ncclAllReduce", ApiDomain::kCollective);
  trace.event(p.section, 10, launch(p, 7, kStart + 2'000, kStart + 2'100, kKernel, kStreamLegacy));
  CollectiveRecord call{};
  call.span = {.begin_ns = kStart + 1'000, .end_ns = kStart + 2'500, .correlation_id = 7, .api = allreduce_api,
               .flags = kApiAsync};
  call.comm_id = 0xC0;
  call.sequence = 1;
  call.stream = kStreamLegacy;
  call.root = -1;
  call.nranks = 2;
  call.op = static_cast<uint8_t>(CollectiveOp::kAllReduce);
  trace.event(p.section, 10, call);
  trace.event(p.section, 99, activity(7, kStart + 1'000, kStart + 9'000, kStreamLegacy, GpuActivityKind::kKernel));
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto gpu = out.gpu_slices();
  ASSERT_EQ(gpu.size(), 1u);
  // 1 ns after the call's begin, not at it: Perfetto's importer binds the
  // arrow's end only to a slice that begins after its start.
  EXPECT_EQ((*gpu[0])["ts"].str(), "2.001");
  EXPECT_EQ((*gpu[0])["args"]["since rank arrival (ns)"].as_int(), 1'001);
  EXPECT_TRUE((*gpu[0])["flow_in"].boolean) << "the arrow from the launch no longer points back";
  expect_checker_accepts(out);
}

TEST(Convert, LostRecordsBecomeVisibleMarkers) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  LostRecord lost{};
  lost.reason = static_cast<uint32_t>(LostReason::kBufferFull);
  lost.first_ns = kStart + 1000;
  lost.last_ns = kStart + 2000;
  lost.count = 42;
  trace.event(p.section, 10, lost);
  tools::ConvertCommand command;
  const ConvertedTrace out = convert_trace(trace, command);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const auto instants = out.with_phase('i');
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ((*instants[0])["name"].str(), "LOST 42 records (buffer full)");
  EXPECT_EQ((*instants[0])["ts"].str(), "1.000");
  EXPECT_NE(out.err.find("42 records were lost"), std::string::npos) << out.err;
  expect_checker_accepts(out);
}

TEST(Convert, SynchronizeAndLifecycleCallsAreSlicesWithTheirDetails) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  SynchronizeRecord sync{};
  sync.span = ApiSpan{kStart + 100, kStart + 900, 5, 0, p.sync_api, 0};
  sync.target = static_cast<uint8_t>(SyncTarget::kDevice);
  trace.event(p.section, 10, sync);
  ApiCallRecord call{};
  call.span = ApiSpan{kStart + 1000, kStart + 1100, 6, 2, p.malloc_api, 0};
  trace.event(p.section, 10, call);
  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const JsonValue* sync_slice = out.slice_named("cudaDeviceSynchronize");
  ASSERT_NE(sync_slice, nullptr);
  EXPECT_EQ((*sync_slice)["args"]["target"].str(), "device");
  EXPECT_EQ((*sync_slice)["dur"].str(), "0.800");
  const JsonValue* malloc_slice = out.slice_named("cudaMalloc");
  ASSERT_NE(malloc_slice, nullptr);
  EXPECT_EQ((*malloc_slice)["args"]["result"].as_int(), 2);
  expect_checker_accepts(out);
}

TEST(Convert, DamagedInputIsRecoveredWithAWarningAndStrictModeFails) {
  TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 300});
  const TracedProcess p = add_process(trace, 1, 10, kStart);
  trace.flush();
  for (uint64_t i = 1; i <= 40; ++i)
    trace.event(p.section, 10, launch(p, i, kStart + i * 100, kStart + i * 100 + 50, kKernel, kStreamLegacy));
  std::vector<uint8_t> bytes = trace.bytes();
  bytes.resize(bytes.size() - 10);
  const std::string path = temp_path("cut.trace");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  const ConvertedTrace out = convert_files({path});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.err.find("cut.trace"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("tail truncated"), std::string::npos) << out.err;
  const size_t recovered = out.with_phase('X', "cuda_driver").size();
  EXPECT_GT(recovered, 0u);
  EXPECT_LT(recovered, 40u);
  expect_checker_accepts(out);

  tools::ConvertCommand strict;
  strict.strict = true;
  EXPECT_EQ(convert_files({path}, strict).exit_code, tools::kExitDamagedInput);
}

TEST(Convert, UnreadableInputsFailWithAMessageNamingTheFile) {
  const std::string garbage = temp_path("garbage.trace");
  {
    std::FILE* f = std::fopen(garbage.c_str(), "wb");
    std::fputs("this is not a trace at all, just some text that is long enough", f);
    std::fclose(f);
  }
  const ConvertedTrace bad = convert_files({garbage});
  EXPECT_EQ(bad.exit_code, tools::kExitError);
  EXPECT_NE(bad.err.find("garbage.trace: not a proflaunch trace"), std::string::npos) << bad.err;

  const ConvertedTrace missing = convert_files({temp_path("missing.trace")});
  EXPECT_EQ(missing.exit_code, tools::kExitError);
  EXPECT_NE(missing.err.find("missing.trace: cannot open"), std::string::npos) << missing.err;

  TraceBuilder only_header;
  const ConvertedTrace empty = convert_files({write_trace(only_header, "header_only.trace")});
  EXPECT_EQ(empty.exit_code, tools::kExitError);
  EXPECT_NE(empty.err.find("no complete chunk"), std::string::npos) << empty.err;
}

TEST(Convert, UnwritableOutputFails) {
  TraceBuilder trace;
  add_process(trace, 1, 10, kStart);
  tools::ConvertCommand command;
  command.output = "/nonexistent-dir/out.json";
  const ConvertedTrace out = convert_trace(trace, command);
  EXPECT_EQ(out.exit_code, tools::kExitError);
  EXPECT_NE(out.err.find("/nonexistent-dir/out.json"), std::string::npos) << out.err;
}

// Records of different threads are not in time order in the file: a start
// range ended by another thread can be read before the launches its own
// thread made inside it. Its GPU projection must still hold them (and not
// the launch after its end).
TEST(Convert, ARangeEndedOnAnotherThreadProjectsTheWorkItsThreadLaunchedBeforeTheEnd) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x51, 4321, kStart);
  trace.function(p.section, kKernel, "k");
  auto nvtx = [](NvtxEventType type, uint64_t at_ns) {
    NvtxEventRecord record{};
    record.type = static_cast<uint8_t>(type);
    record.message_type = static_cast<uint8_t>(type == NvtxEventType::kStart ? NvtxMessageType::kInline
                                                                              : NvtxMessageType::kNone);
    record.span = ApiSpan{at_ns, at_ns + 10, 0, 0, 0, 0};
    record.range_id = 7;
    return record;
  };
  const std::string name = "whole run";
  trace.event_with_tail(p.section, 4321, nvtx(NvtxEventType::kStart, kStart + 100),
                        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(name.data()), name.size()));
  trace.event_with_tail(p.section, 4400, nvtx(NvtxEventType::kEnd, kStart + 5000), std::span<const uint8_t>());
  trace.event(p.section, 4321, launch(p, 1, kStart + 1000, kStart + 1050, kKernel, kStreamLegacy));
  trace.event(p.section, 9999, activity(1, kStart + 1500, kStart + 2500, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 4321, launch(p, 2, kStart + 6000, kStart + 6050, kKernel, kStreamLegacy));
  trace.event(p.section, 9999, activity(2, kStart + 6500, kStart + 9500, kStreamLegacy, GpuActivityKind::kKernel));

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::vector<const JsonValue*> projections;
  for (const JsonValue* e : out.with_phase('X'))
    if ((*e)["name"].str() == "whole run" && (*e)["args"].has("projection")) projections.push_back(e);
  ASSERT_EQ(projections.size(), 1u) << out.json_text;
  EXPECT_EQ((*projections[0])["ts"].str(), "1.500");
  EXPECT_EQ((*projections[0])["dur"].str(), "1.000") << "the first launch's GPU time only";
}

// The GPU side of NVTX ranges goes on the stream of its work in the JSON
// (Kineto's convention). Two threads whose push/pop ranges launch onto one
// stream in turn interleave there: the first range's annotation is on the
// stream, the second's, which would cross it, on the device's "NVTX GPU
// ranges" track, so that every stream's slices still nest.
TEST(Convert, AnnotationsGoOnTheirStreamUnlessTheyWouldCrossAnother) {
  TraceBuilder trace;
  const TracedProcess p = add_process(trace, 0x52, 4321, kStart);
  trace.function(p.section, kKernel, "k");
  auto range = [](NvtxEventType type, uint64_t at_ns) {
    NvtxEventRecord record{};
    record.type = static_cast<uint8_t>(type);
    record.message_type = static_cast<uint8_t>(type == NvtxEventType::kPush ? NvtxMessageType::kInline
                                                                             : NvtxMessageType::kNone);
    record.span = ApiSpan{at_ns, at_ns + 10, 0, 0, 0, 0};
    return record;
  };
  auto name = [](const std::string& text) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  const std::string a = "range A", b = "range B";
  trace.event_with_tail(p.section, 4321, range(NvtxEventType::kPush, kStart + 100), name(a));
  trace.event_with_tail(p.section, 4400, range(NvtxEventType::kPush, kStart + 150), name(b));
  trace.event(p.section, 4321, launch(p, 1, kStart + 1000, kStart + 1050, kKernel, kStreamLegacy));
  trace.event(p.section, 4400, launch(p, 2, kStart + 1100, kStart + 1150, kKernel, kStreamLegacy));
  trace.event(p.section, 4321, launch(p, 3, kStart + 1200, kStart + 1250, kKernel, kStreamLegacy));
  trace.event(p.section, 4400, launch(p, 4, kStart + 1300, kStart + 1350, kKernel, kStreamLegacy));
  trace.event_with_tail(p.section, 4321, range(NvtxEventType::kPop, kStart + 9000), std::span<const uint8_t>());
  trace.event_with_tail(p.section, 4400, range(NvtxEventType::kPop, kStart + 9100), std::span<const uint8_t>());
  trace.event(p.section, 9999, activity(1, kStart + 2000, kStart + 3000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 9999, activity(2, kStart + 3000, kStart + 4000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 9999, activity(3, kStart + 4000, kStart + 5000, kStreamLegacy, GpuActivityKind::kKernel));
  trace.event(p.section, 9999, activity(4, kStart + 5000, kStart + 6000, kStreamLegacy, GpuActivityKind::kKernel));

  const ConvertedTrace out = convert_trace(trace);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  std::map<std::pair<int64_t, int64_t>, std::string> tracks;
  for (const JsonValue* e : out.with_phase('M'))
    if ((*e)["name"].str() == "thread_name") tracks[{(*e)["pid"].as_int(), (*e)["tid"].as_int()}] = (*e)["args"]["name"].str();
  std::pair<int64_t, int64_t> kernel_track{-1, -1};
  std::map<std::string, std::string> annotation_track;
  for (const JsonValue* e : out.with_phase('X')) {
    const std::pair<int64_t, int64_t> track{(*e)["pid"].as_int(), (*e)["tid"].as_int()};
    if ((*e)["cat"].str() == "kernel") kernel_track = track;
    if ((*e)["cat"].str() == "gpu_user_annotation") annotation_track[(*e)["name"].str()] = tracks[track];
  }
  ASSERT_NE(kernel_track.first, -1) << out.json_text;
  ASSERT_EQ(annotation_track.size(), 2u) << out.json_text;
  EXPECT_EQ(annotation_track[a], tracks[kernel_track]) << "on the stream its kernels ran on";
  EXPECT_EQ(annotation_track[b].rfind("NVTX GPU ranges", 0), 0u) << annotation_track[b];
}

}  // namespace
}  // namespace proflaunch::testing
