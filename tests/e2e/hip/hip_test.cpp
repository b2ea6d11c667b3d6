// The AMD pipeline end to end: hipcc-built programs and Debian's real
// rocRAND and rocSPARSE on the simulated HIP runtime (tests/simgpu/hip),
// under `proflaunch`, read back through the formats reader and proftrace.
// Every test compares the program's own output and exit status with an
// untraced run: tracing must not change what a program does.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr char kMatmul[] = "_Z6matmulPKfS0_Pfi";
constexpr uint64_t kMatmulNs = 200'000;
constexpr int32_t kHipErrorNoBinaryForGpu = 209;  // hip_runtime_api.h
// Kernel costs on the simulator (kernels only take time there).
const std::pair<std::string, std::string> kCosts{"SIMGPU_KERNEL_COSTS", "_Z6matmulPKfS0_Pfi=200us,*=10us"};

struct TracedPair {
  ProcessResult untraced;
  ProcessResult traced;
  CudaTrace trace;
};

TracedPair run_both(const TempDir& dir, const std::vector<std::string>& program,
             const std::vector<std::pair<std::string, std::string>>& env = {kCosts},
             const std::vector<std::string>& launcher_args = {}) {
  TracedPair run;
  run.untraced = testing::run_process(untraced(program, env));
  const std::string trace = dir.path() + "/hip.trace";
  run.traced = testing::run_process(traced(trace, program, launcher_args, env));
  run.trace = load_trace_or_fail(trace);
  return run;
}

void expect_same_behaviour(const TracedPair& run) {
  EXPECT_EQ(run.traced.status, run.untraced.status) << run.traced.describe();
  EXPECT_EQ(run.traced.out, run.untraced.out);
}

const ProcessImage& only_image(const TracedPair& run) {
  EXPECT_EQ(run.trace.images.size(), 1u) << describe(run.trace);
  return run.trace.images.front();
}

// Every kernel, copy and memset carries one GpuActivity from HIP events, on
// its own device (an AMD one) and stream, within its call's reach.
void expect_timed_on_amd(const ProcessImage& image) {
  ASSERT_FALSE(image.operations.empty());
  for (const Operation& op : image.operations) {
    EXPECT_TRUE(format::is_amd_device(op.device)) << op.api << " device " << op.device;
    ASSERT_EQ(op.gpu.size(), 1u) << op.api << " " << op.kernel;
    const format::GpuActivityRecord& gpu = op.gpu.front();
    EXPECT_EQ(gpu.source, static_cast<uint8_t>(format::GpuTimingSource::kEvents)) << op.api;
    EXPECT_EQ(gpu.device, op.device) << op.api;
    EXPECT_EQ(gpu.stream, op.stream) << op.api;
    EXPECT_GE(gpu.start_ns, op.span.begin_ns) << op.api << " starts before its call";
    EXPECT_LE(gpu.start_ns, gpu.end_ns) << op.api;
  }
}

TEST(HipTraining, EveryKernelCopyAndMemsetIsNamedTimedAndOnAnAmdDevice) {
  TempDir dir;
  const int steps = 4;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--steps", std::to_string(steps), "--module",
                                 build_path("HIP_SCALE_MODULE")});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const ProcessImage& image = only_image(run);

  // The device says it is an AMD one, with its target.
  ASSERT_EQ(image.devices.count(format::kAmdDeviceBase), 1u);
  const format::DeviceInfoRecord device = image.devices.at(format::kAmdDeviceBase);
  EXPECT_EQ(device.vendor, static_cast<uint8_t>(format::Vendor::kAmd));
  EXPECT_NE(image.string(device.name_string).find("gfx90a"), std::string::npos);

  // Kernel names from registration (<<<>>> and hipLaunchKernelGGL) and from
  // a module loaded at run time.
  const std::map<std::string, int> kernels = image.launches_by_kernel();
  EXPECT_EQ(kernels.count(kMatmul) ? kernels.at(kMatmul) : 0, 3 * steps);
  EXPECT_EQ(image.launch_count("bias_relu"), 3 * steps + 2);  // + hipExtLaunchKernel, cooperative
  EXPECT_EQ(image.launch_count("softmax_loss"), steps);
  EXPECT_EQ(image.launch_count("backward"), 3 * steps);
  EXPECT_EQ(image.launch_count("sgd_update"), 3 * steps);
  EXPECT_EQ(kernels.count("scale") ? kernels.at("scale") : 0, steps);
  std::map<std::string, int> launch_apis;
  for (const Operation* launch : image.launches()) {
    EXPECT_FALSE(launch->kernel.empty()) << launch->api;
    ++launch_apis[launch->api];
    if (launch->api == "hipExtLaunchKernel") EXPECT_NE(launch->launch.launch_flags & format::kLaunchExtended, 0u);
    if (launch->api == "hipLaunchCooperativeKernel")
      EXPECT_NE(launch->launch.launch_flags & format::kLaunchCooperative, 0u);
  }
  EXPECT_EQ(launch_apis["hipModuleLaunchKernel"], steps);
  EXPECT_EQ(launch_apis["hipExtLaunchKernel"], 1);
  EXPECT_EQ(launch_apis["hipLaunchCooperativeKernel"], 1);
  EXPECT_EQ(launch_apis["hipLaunchKernel"], 13 * steps);  // 3 matmul, 3 bias_relu, softmax, 3 backward, 3 sgd
  ASSERT_NO_FATAL_FAILURE(expect_timed_on_amd(image));
  // The modelled cost shows: every matmul lasted at least 200 us.
  for (const Operation* launch : image.launches()) {
    if (launch->kernel != kMatmul) continue;
    EXPECT_GE(launch->gpu.front().end_ns - launch->gpu.front().start_ns, kMatmulNs - 1000);
  }

  // Copies: the learning rate to and from its __device__ variable, the
  // batch in from pinned host memory, the loss out.
  int to_device = 0, to_host = 0, symbol_copies = 0;
  for (const Operation* copy : image.copies()) {
    if (copy->api == "hipMemcpyToSymbol" || copy->api == "hipMemcpyFromSymbol") {
      ++symbol_copies;
      EXPECT_EQ(copy->copy.direction, static_cast<uint8_t>(copy->api == "hipMemcpyToSymbol"
                                                                ? format::CopyDirection::kHostToDevice
                                                                : format::CopyDirection::kDeviceToHost));
      EXPECT_EQ(copy->bytes, sizeof(float));
      continue;
    }
    EXPECT_EQ(copy->api, "hipMemcpyAsync");
    if (copy->copy.direction == static_cast<uint8_t>(format::CopyDirection::kHostToDevice)) {
      ++to_device;
      EXPECT_EQ(copy->copy.src_kind, static_cast<uint8_t>(format::MemoryKind::kPinnedHost));
      EXPECT_EQ(copy->copy.dst_kind, static_cast<uint8_t>(format::MemoryKind::kDevice));
    } else if (copy->copy.direction == static_cast<uint8_t>(format::CopyDirection::kDeviceToHost)) {
      ++to_host;
    }
  }
  EXPECT_EQ(to_device, steps);
  EXPECT_EQ(to_host, steps);
  EXPECT_EQ(symbol_copies, 2);
  EXPECT_EQ(image.sets().size(), 4u);  // three weights and the bias

  // Every HIP call appears with its result; the APIs are AMD's.
  std::map<std::string, int> calls;
  for (const SpanRecord& span : image.spans) {
    ++calls[span.api];
    EXPECT_EQ(span.span.result, 0) << span.api;
  }
  EXPECT_EQ(calls["hipMallocAsync"], 2 * steps);
  EXPECT_EQ(calls["hipFreeAsync"], 2 * steps);
  EXPECT_EQ(calls["hipMalloc"], 6);
  EXPECT_EQ(calls["hipFree"], 6);
  EXPECT_EQ(calls["hipHostMalloc"], 2);
  EXPECT_EQ(calls["hipStreamSynchronize"], steps + 1);
  EXPECT_EQ(calls["hipStreamWaitEvent"], steps);
  EXPECT_EQ(calls["hipModuleLoad"], 1);
  EXPECT_EQ(calls["hipStreamCreateWithFlags"], 2);
  EXPECT_EQ(calls["hipEventElapsedTime"], 1);
  for (const auto& [id, api] : image.apis) {
    const std::string name = image.string(api.name_string);
    if (name.rfind("hip", 0) == 0 || name.rfind("__hip", 0) == 0)
      EXPECT_EQ(api.vendor, static_cast<uint8_t>(format::Vendor::kAmd)) << name;
  }
  EXPECT_GE(image.counted_calls.count("__hipPushCallConfiguration"), 1u);

  // Streams, the event and the module: created and destroyed, handle for handle.
  std::map<uint8_t, std::map<uint64_t, int>> live;  // object kind -> handle -> creates - destroys
  std::map<uint8_t, int> created;
  for (const HostCall& call : image.calls) {
    if (call.kind != format::RecordKind::kObjectLifecycle) continue;
    const format::ObjectLifecycleRecord& r = call.lifecycle;
    EXPECT_NE(r.handle, 0u) << call.api;
    EXPECT_TRUE(format::is_amd_device(r.device)) << call.api;
    const bool create = r.action == static_cast<uint8_t>(format::LifecycleAction::kCreate);
    live[r.object][r.handle] += create ? 1 : -1;
    if (create) ++created[r.object];
    if (create && r.object == static_cast<uint8_t>(format::ObjectKind::kStream))
      EXPECT_EQ(r.flags, 1u) << "hipStreamNonBlocking";
  }
  EXPECT_EQ(created[static_cast<uint8_t>(format::ObjectKind::kStream)], 2);
  EXPECT_EQ(created[static_cast<uint8_t>(format::ObjectKind::kEvent)], 3);
  EXPECT_EQ(created[static_cast<uint8_t>(format::ObjectKind::kModule)], 1);
  for (const auto& [object, handles] : live)
    for (const auto& [handle, balance] : handles) EXPECT_EQ(balance, 0) << "object kind " << int(object);
  EXPECT_TRUE(image.lost.empty());
}

TEST(HipTraining, ThreadsOnTheirOwnStreamsAreEachTimed) {
  TempDir dir;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--steps", "3", "--threads", "3"});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const ProcessImage& image = only_image(run);
  ASSERT_NO_FATAL_FAILURE(expect_timed_on_amd(image));
  std::map<uint32_t, std::set<uint64_t>> streams_by_thread;
  for (const Operation& op : image.operations) streams_by_thread[op.tid].insert(op.stream);
  std::set<uint64_t> all;
  int threads_with_two_streams = 0;
  for (const auto& [tid, streams] : streams_by_thread) {
    if (streams.size() >= 2) ++threads_with_two_streams;
    all.insert(streams.begin(), streams.end());
  }
  EXPECT_EQ(threads_with_two_streams, 3);
  EXPECT_GE(all.size(), 6u);
  EXPECT_EQ(image.launch_count("matmul"), 3 * 3 * 3);
  // Work of one stream never overlaps on the GPU. On the streams the threads
  // created, every submission is asynchronous and holds the stream's
  // submission lock between its events; the null stream, which all threads
  // share through synchronous hipMemset, is bounded on the host side only
  // (hip_timing.cpp), as for CUDA.
  all.erase(format::kStreamLegacy);
  for (uint64_t stream : all) {
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    for (const Operation& op : image.operations)
      if (op.stream == stream) spans.push_back({op.gpu.front().start_ns, op.gpu.front().end_ns});
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first) << "stream " << stream;
  }
}

TEST(HipTraining, AForkedWorkerIsTracedAsItsOwnProcess) {
  TempDir dir;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--steps", "2", "--fork"});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  ASSERT_EQ(run.trace.images.size(), 2u) << describe(run.trace);
  const ProcessImage& first = run.trace.images[0];
  const ProcessImage& second = run.trace.images[1];
  EXPECT_NE(first.pid(), second.pid());
  for (const ProcessImage* image : {&first, &second}) {
    EXPECT_EQ(image->launch_count("matmul"), 3 * 2) << image->command_line();
    ASSERT_NO_FATAL_FAILURE(expect_timed_on_amd(*image));
  }
}

TEST(HipTraining, ATargetWithoutCodeForTheDeviceFailsTheSameWayTraced) {
  // The simulated devices become gfx1030, which the program has no code for:
  // its first use of device code (setting a __device__ variable) fails.
  TempDir dir;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--steps", "1"},
                                  {kCosts, {"SIMGPU_HIP_ARCH", "gfx1030"}});
  expect_same_behaviour(run);
  EXPECT_EQ(run.traced.err, run.untraced.err);
  EXPECT_TRUE(run.traced.exited_with(2)) << run.traced.describe();
  EXPECT_NE(run.traced.err.find("hipMemcpyToSymbol"), std::string::npos) << run.traced.err;
  EXPECT_NE(run.traced.err.find("hipErrorNoBinaryForGpu"), std::string::npos) << run.traced.err;
  const ProcessImage& image = only_image(run);
  std::vector<const Operation*> failed;
  for (const Operation& op : image.operations)
    if (op.span.result != 0) failed.push_back(&op);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed.front()->api, "hipMemcpyToSymbol");
  EXPECT_EQ(failed.front()->span.result, kHipErrorNoBinaryForGpu);
  EXPECT_TRUE(failed.front()->gpu.empty()) << "a call that failed has no GPU time";
  EXPECT_TRUE(image.launches().empty());
}

TEST(HipTraining, ACapturedStepIsNeverBrokenAndEachReplayIsTimed) {
  TempDir dir;
  const int steps = 3;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--graph", "--steps", std::to_string(steps)});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const ProcessImage& image = only_image(run);
  // Every launch and copy made during the global-mode capture is flagged as
  // captured and has no GPU time (no timing event went into the capture).
  ASSERT_EQ(image.launch_count("matmul"), 3);
  for (const Operation& op : image.operations) {
    EXPECT_NE(op.span.flags & format::kApiCaptured, 0) << op.api;
    EXPECT_TRUE(op.gpu.empty()) << op.api;
  }
  int graph_launches = 0;
  for (const SpanRecord& span : image.spans) graph_launches += span.kind == format::RecordKind::kGraphLaunch;
  EXPECT_EQ(graph_launches, steps);
  int graph_activities = 0;
  for (const format::GpuActivityRecord& gpu : image.gpu_activities)
    graph_activities += gpu.kind == static_cast<uint8_t>(format::GpuActivityKind::kGraph);
  EXPECT_EQ(graph_activities, steps);
  EXPECT_TRUE(image.lost.empty()) << "captured work is not untimed work";
}

TEST(HipTraining, NoGpuTimingStillRecordsEveryCall) {
  TempDir dir;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--steps", "2"}, {kCosts}, {"--gpu-timing=none"});
  expect_same_behaviour(run);
  const ProcessImage& image = only_image(run);
  EXPECT_TRUE(image.gpu_activities.empty());
  EXPECT_EQ(image.launch_count("matmul"), 6);
}

// hipStreamAddCallback: the host function is a launch on the stream, timed,
// and named by the shim too (a FunctionDef), so that a trace converted where
// neither the symbol table nor the program's file is at hand still names it.
TEST(HipTraining, AStreamCallbackIsTimedAndNamedInTheTrace) {
  TempDir dir;
  const int steps = 3;
  const TracedPair run = run_both(dir, {build_path("HIP_TRAINING"), "--steps", std::to_string(steps), "--callback"},
                                  {kCosts});
  expect_same_behaviour(run);
  const ProcessImage& image = only_image(run);
  int callbacks = 0;
  for (const Operation* launch : image.launches()) {
    if ((launch->launch.launch_flags & format::kLaunchHostFunction) == 0) continue;
    ++callbacks;
    EXPECT_EQ(launch->api, "hipStreamAddCallback");
    EXPECT_TRUE(format::is_amd_device(launch->device));
    ASSERT_EQ(launch->gpu.size(), 1u);
    EXPECT_EQ(launch->gpu.front().kind, static_cast<uint8_t>(format::GpuActivityKind::kHostFunction));
    const auto named = image.functions.find(launch->launch.function);
    ASSERT_NE(named, image.functions.end()) << "no FunctionDef for the callback's address";
    const std::string name = image.string(named->second.back().name_string);
    EXPECT_NE(name.find("hip_training+0x"), std::string::npos) << name;
  }
  EXPECT_EQ(callbacks, steps);
}

TEST(RealRocmLibraries, RocRandKernelsAppearWithTheirRealNames) {
  TempDir dir;
  const TracedPair run = run_both(dir, {build_path("ROCRAND_UNIFORM")}, {});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const ProcessImage& image = only_image(run);
  ASSERT_FALSE(image.launches().empty());
  std::set<std::string> names;
  for (const Operation* launch : image.launches()) {
    ASSERT_FALSE(launch->kernel.empty());
    names.insert(demangle(launch->kernel));
  }
  bool philox = false, xorwow = false;
  for (const std::string& name : names) {
    EXPECT_NE(name.find("rocrand"), std::string::npos) << name;
    philox = philox || name.find("philox") != std::string::npos;
    xorwow = xorwow || name.find("xorwow") != std::string::npos;
  }
  EXPECT_TRUE(philox && xorwow) << ::testing::PrintToString(names);
  ASSERT_NO_FATAL_FAILURE(expect_timed_on_amd(image));
}

TEST(RealRocmLibraries, RocSparseSpmvKernelsAndCopiesAreTraced) {
  TempDir dir;
  const TracedPair run = run_both(dir, {build_path("ROCSPARSE_SPMV")}, {});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const ProcessImage& image = only_image(run);
  bool csrmv = false;
  for (const Operation* launch : image.launches()) {
    ASSERT_FALSE(launch->kernel.empty());
    csrmv = csrmv || demangle(launch->kernel).find("csrmv") != std::string::npos;
  }
  EXPECT_TRUE(csrmv) << describe(run.trace);
  EXPECT_GE(image.copies().size(), 5u);  // four in, one out
  ASSERT_NO_FATAL_FAILURE(expect_timed_on_amd(image));
}

// Issue 37 item 6: a hipcc-built kernel with 16 KiB of static LDS, launched
// as 256 work-items (4 waves) on 8 workgroups per CU of the simulated gfx90a
// (tests/simgpu/hip/tests/api_checks.hip). Its VGPRs are the code object's
// (a handful: they do not limit, 512 / 8 > 8 waves), so AMD's rules give
// 64 KiB / 16 KiB = 4 workgroups = 16 of a CU's 32 wave slots: 50%.
TEST(HipReports, StatsShowRegistersAndAmdOccupancy) {
  TempDir dir;
  const std::string trace = dir.path() + "/hip.trace";
  const ProcessResult run =
      testing::run_process(traced(trace, {build_path("HIP_API_CHECKS"), "launch-lds-quarter"}, {}, {kCosts}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-kernels", "--csv", trace});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  std::vector<std::string> header, row;
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    size_t start = 0;
    for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
      cells.push_back(line.substr(start, comma - start));
    cells.push_back(line.substr(start));
    return cells;
  };
  std::istringstream lines(stats.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("Regs") != std::string::npos && header.empty()) header = split(line);
    if (line.find("lds_quarter") != std::string::npos) row = split(line);
  }
  ASSERT_FALSE(header.empty()) << stats.out;
  ASSERT_FALSE(row.empty()) << stats.out;
  auto cell = [&](const std::string& name) -> std::string {
    for (size_t i = 0; i < header.size() && i < row.size(); ++i)
      if (header[i].find(name) == 0) return row[i];
    return "?";
  };
  const std::string regs = cell("Regs");
  ASSERT_FALSE(regs.empty() || regs == "-" || regs == "?") << stats.out;
  EXPECT_GE(std::stoi(regs), 1) << stats.out;
  EXPECT_LE(std::stoi(regs), 64) << stats.out;
  EXPECT_EQ(cell("Static Shared"), "16384") << stats.out;
  const std::string occupancy = cell("Est. Occupancy");
  ASSERT_FALSE(occupancy == "-" || occupancy == "?") << stats.out;
  EXPECT_DOUBLE_EQ(std::stod(occupancy), 50.0) << stats.out;
}

TEST(HipReports, StatsAndMemoryWorkUnchangedForAmd) {
  TempDir dir;
  const std::string trace = dir.path() + "/hip.trace";
  const ProcessResult run =
      testing::run_process(traced(trace, {build_path("HIP_TRAINING"), "--steps", "3"}, {}, {kCosts}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const ProcessResult stats = run_proftrace({"stats", "--section", "gpu-kernels", trace});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  EXPECT_NE(stats.out.find("matmul(float const*, float const*, float*, int)"), std::string::npos) << stats.out;
  const ProcessResult memory = run_proftrace({"memory", trace});
  ASSERT_TRUE(memory.exited_with(0)) << memory.describe();
  EXPECT_NE(memory.out.find("AMD GPU 0"), std::string::npos) << memory.out;
  EXPECT_NE(memory.out.find("12 allocations, 12 frees, 0 failed"), std::string::npos) << memory.out;
  const std::string json = dir.path() + "/hip.json";
  const ProcessResult convert = run_proftrace({"convert", trace, "-o", json});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
}

std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

int count_of(const std::string& text, const std::string& fragment) {
  int count = 0;
  for (size_t at = text.find(fragment); at != std::string::npos; at = text.find(fragment, at + 1)) ++count;
  return count;
}

TEST(Rccl, TwoRanksAreTracedWithTheirLibraryTheirAmdDevicesAndCollectiveGpuTime) {
  TempDir dir;
  const int iterations = 3;
  const TracedPair run = run_both(dir, {build_path("RCCL_RANKS"), "--iterations", std::to_string(iterations)}, {});
  // The ranks print in either order.
  EXPECT_EQ(run.traced.status, run.untraced.status) << run.traced.describe();
  EXPECT_EQ(sorted_lines(run.traced.out), sorted_lines(run.untraced.out));
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  ASSERT_EQ(run.trace.images.size(), 2u) << describe(run.trace);

  for (const ProcessImage& image : run.trace.images) {
    SCOPED_TRACE(image.pid());
    int collectives = 0;
    for (const SpanRecord& span : image.spans) {
      if (span.kind != format::RecordKind::kCollective) continue;
      ++collectives;
      // The collective's kernel, launched by RCCL through HIP inside the
      // call, carries the call's correlation id and is timed from it.
      const Operation* kernel = nullptr;
      for (const Operation* launch : image.launches())
        if (launch->span.correlation_id == span.span.correlation_id) kernel = launch;
      ASSERT_NE(kernel, nullptr) << span.api;
      EXPECT_EQ(kernel->api, "hipModuleLaunchKernel");
      EXPECT_NE(kernel->kernel.find("ncclDevKernel_"), std::string::npos) << kernel->kernel;
      ASSERT_EQ(kernel->gpu.size(), 1u);
      EXPECT_TRUE(format::is_amd_device(kernel->device));
      EXPECT_GE(kernel->gpu.front().start_ns, span.span.begin_ns);
    }
    EXPECT_EQ(collectives, iterations + 1);
    EXPECT_EQ(image.launch_count("compute"), iterations);
  }
  const std::string trace = dir.path() + "/hip.trace";
  const ProcessResult dump = run_proftrace({"dump", trace});
  ASSERT_TRUE(dump.exited_with(0)) << dump.describe();
  EXPECT_EQ(count_of(dump.out, "library=RCCL"), 4) << "init and destroy on each rank";
  EXPECT_EQ(count_of(dump.out, "action=init comm="), 2);
  EXPECT_EQ(count_of(dump.out, "device=65536 action=init"), 1);
  EXPECT_EQ(count_of(dump.out, "device=65537 action=init"), 1);
  // The rank table answers for AMD as for NVIDIA: both ranks, every
  // collective seen on both.
  const ProcessResult stats = run_proftrace({"stats", "--section", "nccl-ranks", trace});
  ASSERT_TRUE(stats.exited_with(0)) << stats.describe();
  EXPECT_NE(stats.out.find("arrived last at"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("of " + std::to_string(iterations + 1) + " collectives"), std::string::npos) << stats.out;
}

TEST(BothVendors, OneProcessIsTracedOnItsNvidiaAndItsAmdDevice) {
  TempDir dir;
  const int rounds = 2;
  const TracedPair run = run_both(dir, {build_path("MIXED_VENDORS"), "--rounds", std::to_string(rounds)}, {});
  expect_same_behaviour(run);
  ASSERT_TRUE(run.traced.exited_with(0)) << run.traced.describe();
  const ProcessImage& image = only_image(run);
  ASSERT_EQ(image.devices.count(0), 1u);
  ASSERT_EQ(image.devices.count(format::kAmdDeviceBase), 1u);
  EXPECT_EQ(image.devices.at(0).vendor, static_cast<uint8_t>(format::Vendor::kNvidia));
  EXPECT_EQ(image.devices.at(format::kAmdDeviceBase).vendor, static_cast<uint8_t>(format::Vendor::kAmd));
  int hip_ops = 0, cuda_ops = 0;
  for (const Operation& op : image.operations) {
    ASSERT_EQ(op.gpu.size(), 1u) << op.api;
    EXPECT_EQ(op.gpu.front().device, op.device) << op.api;
    if (op.api.rfind("hip", 0) == 0) {
      ++hip_ops;
      EXPECT_EQ(op.device, format::kAmdDeviceBase) << op.api;
    } else {
      ++cuda_ops;
      EXPECT_EQ(op.api.rfind("cuda", 0), 0u) << op.api;
      EXPECT_EQ(op.device, 0) << op.api;
    }
  }
  EXPECT_EQ(hip_ops, 4 * rounds);   // copy in, kernel (<<<>>> and through dlsym), copy out
  EXPECT_EQ(cuda_ops, 3 * rounds);  // memset, copy in, copy out
  const std::string json = dir.path() + "/mixed.json";
  const ProcessResult convert = run_proftrace({"convert", dir.path() + "/hip.trace", "-o", json});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  std::ifstream in(json);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"AMD GPU 0 ("), std::string::npos);
  EXPECT_NE(text.find("\"GPU 0 ("), std::string::npos);
}

}  // namespace
}  // namespace proflaunch::e2e
