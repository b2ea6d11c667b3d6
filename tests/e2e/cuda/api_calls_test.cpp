// Every CUDA call a program makes appears in its trace with its result,
// including the calls a hand-kept hook list missed: api_calls prints each
// call it makes ("CALL <api> <result>") and the test finds each one, in
// order, among the main thread's records (or among the counted calls, for
// a counted API that succeeded). Copies between two GPUs are peer copies
// with both devices, whatever API asked for them; host functions are
// stream work with a GPU duration; a failing call is recorded with its
// error, the last one (which ends the program) last.
#include <gtest/gtest.h>

#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

struct PrintedCall {
  std::string api;
  int result;
};
struct PrintedCopy {
  std::string api;
  int src_device;
  int dst_device;
};

struct Printed {
  std::vector<PrintedCall> calls;
  std::vector<PrintedCopy> copies;
  std::map<std::string, uint64_t> counts;
};

Printed parse(const std::string& out) {
  Printed printed;
  std::istringstream lines(out);
  std::string word;
  while (lines >> word) {
    if (word == "CALL") {
      PrintedCall call;
      lines >> call.api >> call.result;
      printed.calls.push_back(call);
    } else if (word == "COPY") {
      PrintedCopy copy;
      lines >> copy.api >> copy.src_device >> copy.dst_device;
      printed.copies.push_back(copy);
    } else if (word == "COUNT") {
      std::string api;
      uint64_t n = 0;
      lines >> api >> n;
      printed.counts[api] += n;
    }
  }
  return printed;
}

// APIs counted rather than recorded by default (preload/cuda/hook_rows.txt).
const std::set<std::string> kCountedApis = {"cuDeviceGet", "cuGetProcAddress", "cudaGetDevice",
                                            "cudaGetLastError", "cudaGetDeviceCount"};

class ApiCalls : public ::testing::Test {
 protected:
  void SetUp() override {
    run_ = testing::run_process(traced(dir_ / "x.trace", {build_path("API_CALLS")}, {},
                                       {{"SIMGPU_DEVICE_COUNT", "2"}}));
    ASSERT_TRUE(run_.exited_with(3)) << "the program ends on its failing last call\n" << run_.describe();
    printed_ = parse(run_.out);
    ASSERT_GT(printed_.calls.size(), 30u) << run_.out;
    trace_ = load_trace_or_fail(dir_ / "x.trace");
    ASSERT_EQ(trace_.images.size(), 1u) << describe(trace_);
    image_ = &trace_.images.front();
    main_tid_ = image_->pid();
  }

  std::vector<const SpanRecord*> main_thread_spans() const {
    std::vector<const SpanRecord*> spans;
    for (const SpanRecord& span : image_->spans)
      if (span.tid == main_tid_) spans.push_back(&span);
    return spans;
  }

  TempDir dir_;
  ProcessResult run_;
  Printed printed_;
  CudaTrace trace_;
  const ProcessImage* image_ = nullptr;
  uint32_t main_tid_ = 0;
};

TEST_F(ApiCalls, EveryCallIsInTheTraceInOrderWithItsResult) {
  const std::vector<const SpanRecord*> spans = main_thread_spans();
  size_t next = 0;
  std::map<std::string, uint64_t> counted_successes;
  for (const PrintedCall& call : printed_.calls) {
    SCOPED_TRACE(call.api + " returned " + std::to_string(call.result));
    if (kCountedApis.count(call.api) && (call.result == 0 || call.result == 600)) {
      ++counted_successes[call.api];
      continue;
    }
    size_t found = next;
    while (found < spans.size() && !(spans[found]->api == call.api && spans[found]->span.result == call.result))
      ++found;
    ASSERT_LT(found, spans.size()) << "no record of this call after record " << next;
    next = found + 1;
  }
  for (const auto& [api, n] : counted_successes)
    EXPECT_GE(image_->counted_calls_by_thread.count({main_tid_, api}) ? image_->counted_calls_by_thread.at({main_tid_, api}) : 0,
              n)
        << api << " is counted";
}

TEST_F(ApiCalls, CuCtxCreateThroughItsOlderAbiIsACreation) {
  bool created = false, destroyed = false;
  for (const HostCall& call : image_->calls) {
    if (call.kind != format::RecordKind::kObjectLifecycle ||
        call.lifecycle.object != static_cast<uint8_t>(format::ObjectKind::kContext))
      continue;
    if (call.api == "cuCtxCreate" && call.lifecycle.action == static_cast<uint8_t>(format::LifecycleAction::kCreate)) {
      created = true;
      EXPECT_NE(call.lifecycle.handle, 0u);
      EXPECT_EQ(call.lifecycle.device, 0);
    }
    destroyed |= call.api == "cuCtxDestroy";
  }
  EXPECT_TRUE(created) << "cuCtxCreate_v2, dlsym'ed from libcuda, is recorded";
  EXPECT_TRUE(destroyed);
}

TEST_F(ApiCalls, CopiesBetweenTwoGpusArePeerCopiesWithBothDevices) {
  std::vector<const Operation*> copies;
  for (const Operation* copy : image_->copies())
    if (copy->tid == main_tid_ && copy->copy.src_device >= 0 && copy->copy.dst_device >= 0) copies.push_back(copy);
  ASSERT_EQ(copies.size(), printed_.copies.size());
  for (size_t i = 0; i < copies.size(); ++i) {
    SCOPED_TRACE(printed_.copies[i].api + " #" + std::to_string(i));
    EXPECT_EQ(copies[i]->api, printed_.copies[i].api);
    EXPECT_EQ(copies[i]->copy.direction, static_cast<uint8_t>(format::CopyDirection::kPeer));
    EXPECT_EQ(copies[i]->copy.src_device, printed_.copies[i].src_device);
    EXPECT_EQ(copies[i]->copy.dst_device, printed_.copies[i].dst_device);
    EXPECT_EQ(copies[i]->copy.peer_device, printed_.copies[i].src_device);
    EXPECT_EQ(copies[i]->copy.src_kind, static_cast<uint8_t>(format::MemoryKind::kDevice));
    ASSERT_EQ(copies[i]->gpu.size(), 1u);
  }
}

TEST_F(ApiCalls, TwoDimensionalCopiesAndMemsetsAreOperations) {
  int copies_2d = 0, sets_2d = 0;
  for (const Operation& op : image_->operations) {
    if (op.api == "cudaMemcpy2D") {
      ++copies_2d;
      EXPECT_EQ(op.bytes, 65536u);
      EXPECT_EQ(op.copy.direction, static_cast<uint8_t>(format::CopyDirection::kHostToDevice));
      EXPECT_EQ(op.copy.src_kind, static_cast<uint8_t>(format::MemoryKind::kPageableHost));
      EXPECT_EQ(op.gpu.size(), 1u);
    }
    if (op.api == "cudaMemset2D" || op.api == "cudaMemset2DAsync") {
      ++sets_2d;
      EXPECT_EQ(op.bytes, 512u * 64u);
      EXPECT_EQ(op.gpu.size(), 1u);
    }
  }
  EXPECT_EQ(copies_2d, 1);
  EXPECT_EQ(sets_2d, 2);
}

TEST_F(ApiCalls, HostFunctionsAreStreamWorkWithAGpuDuration) {
  std::vector<std::string> apis;
  for (const Operation& op : image_->operations) {
    if (!op.host_function()) continue;
    apis.push_back(op.api);
    EXPECT_NE(op.launch.function, 0u);
    ASSERT_EQ(op.gpu.size(), 1u) << op.api;
    EXPECT_EQ(op.gpu.front().kind, static_cast<uint8_t>(format::GpuActivityKind::kHostFunction));
    EXPECT_GE(op.gpu.front().end_ns, op.gpu.front().start_ns);
    EXPECT_NE(op.stream, format::kStreamLegacy);
  }
  EXPECT_EQ(apis, (std::vector<std::string>{"cudaLaunchHostFunc", "cudaStreamAddCallback", "cuLaunchHostFunc"}));
}

TEST_F(ApiCalls, GettersInALoopAreCountedNotRecorded) {
  for (const auto& [api, n] : printed_.counts) {
    SCOPED_TRACE(api);
    const auto key = std::make_pair(main_tid_, api);
    ASSERT_TRUE(image_->counted_calls_by_thread.count(key));
    EXPECT_GE(image_->counted_calls_by_thread.at(key), n);
    // Only the failed calls of a counted API are records.
    for (const SpanRecord& span : image_->spans)
      if (span.api == api) EXPECT_NE(span.span.result, 0) << "a successful counted call was recorded";
  }
  // The failed cudaGetLastError calls are recorded, without a duration.
  int failed_getters = 0;
  for (const SpanRecord& span : image_->spans) {
    if (span.api != "cudaGetLastError") continue;
    ++failed_getters;
    EXPECT_NE(span.span.flags & format::kApiNoDuration, 0);
    EXPECT_EQ(span.span.begin_ns, span.span.end_ns);
  }
  EXPECT_EQ(failed_getters, 2);
}

TEST_F(ApiCalls, TheFailingCallThatEndedTheProgramIsItsLastRecord) {
  const std::vector<const SpanRecord*> spans = main_thread_spans();
  ASSERT_FALSE(spans.empty());
  const SpanRecord* last = spans.back();
  for (const SpanRecord* span : spans)
    if (span->span.begin_ns > last->span.begin_ns) last = span;
  EXPECT_EQ(last->api, "cudaMemcpy");
  EXPECT_EQ(last->span.result, printed_.calls.back().result);
  EXPECT_NE(last->span.result, 0);
}

// --count-calls=none: no API is counted for its own sake (the driver calls
// a runtime call makes on its behalf still are: they belong to that call);
// a list adds and removes APIs in order.
TEST(CountCalls, NoneRecordsEveryCallAndAListAdjustsTheDefault) {
  TempDir dir;
  ProcessResult run = testing::run_process(
      traced(dir / "none.trace", {build_path("API_CALLS")}, {"--count-calls=none"}, {{"SIMGPU_DEVICE_COUNT", "2"}}));
  ASSERT_TRUE(run.exited_with(3)) << run.describe();
  CudaTrace trace = load_trace_or_fail(dir / "none.trace");
  ASSERT_EQ(trace.images.size(), 1u);
  for (const auto& [api, count] : trace.images.front().counted_calls)
    EXPECT_EQ(api.rfind("cuda", 0), std::string::npos) << api << " was counted";
  int recorded = 0;
  for (const SpanRecord& span : trace.images.front().spans) recorded += span.api == "cudaGetDevice";
  EXPECT_GE(recorded, 100);

  run = testing::run_process(traced(dir / "list.trace", {build_path("API_CALLS")},
                                    {"--count-calls=default,-cudaGetDevice,cudaMalloc"},
                                    {{"SIMGPU_DEVICE_COUNT", "2"}}));
  ASSERT_TRUE(run.exited_with(3)) << run.describe();
  trace = load_trace_or_fail(dir / "list.trace");
  ASSERT_EQ(trace.images.size(), 1u);
  const ProcessImage& image = trace.images.front();
  EXPECT_EQ(image.counted_calls.count("cudaGetDevice"), 0u);
  EXPECT_GE(image.counted_calls.at("cudaGetLastError"), 100u);
  EXPECT_GE(image.counted_calls.at("cudaMalloc"), 2u);
  int failed_mallocs = 0;
  for (const SpanRecord& span : image.spans) {
    if (span.api != "cudaMalloc") continue;
    EXPECT_NE(span.span.result, 0) << "a counted cudaMalloc is recorded only when it fails";
    ++failed_mallocs;
  }
  EXPECT_EQ(failed_mallocs, 1);
}

TEST(CountCalls, ABadListIsRefusedBeforeTheProgramRuns) {
  TempDir dir;
  const ProcessResult run =
      testing::run_process(traced(dir / "x.trace", {build_path("API_CALLS")}, {"--count-calls=cuInit,,x"}));
  EXPECT_TRUE(run.exited_with(2)) << run.describe();
  EXPECT_NE(run.err.find("--count-calls"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "") << "the program did not run";
}

}  // namespace
}  // namespace proflaunch::e2e
