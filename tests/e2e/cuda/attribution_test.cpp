// No double counting, and the right name on each operation: a runtime call
// is recorded once, by the driver hook it reaches, under the runtime API's
// name (kApiViaRuntime) with the driver's details (function, stream, copy
// direction); calls made directly on the driver (the cuBLAS-like and
// Triton-like libraries) carry driver API names; the per-thread default
// stream variants say so (kApiPerThreadStream) and name that stream.
#include <gtest/gtest.h>

#include <set>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

bool is_runtime_api(const std::string& api) { return api.rfind("cuda", 0) == 0; }
bool is_driver_api(const std::string& api) { return api.rfind("cu", 0) == 0 && !is_runtime_api(api); }

CudaTrace run_and_load(const TempDir& dir, const std::vector<std::string>& program) {
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  EXPECT_EQ(trace.images.size(), 1u) << describe(trace);
  return trace;
}

// Each operation once: correlation ids are unique, and no runtime launch,
// copy or memset also left an ApiCall record of its own.
void expect_recorded_once(const ProcessImage& image) {
  std::set<uint64_t> ids;
  for (const Operation& op : image.operations)
    EXPECT_TRUE(ids.insert(op.span.correlation_id).second) << "correlation id repeats: " << op.api;
  for (const HostCall& call : image.calls) {
    if (call.kind != format::RecordKind::kApiCall) continue;
    for (const char* operation : {"cudaLaunchKernel", "cudaMemcpy", "cudaMemset", "cuLaunchKernel", "cuMemcpy", "cuMemset"})
      EXPECT_NE(call.api.rfind(operation, 0), 0u) << "an operation was also recorded as a plain call: " << call.api;
  }
}

TEST(Attribution, RuntimeOperationsAreRecordedOnceUnderTheRuntimeName) {
  TempDir dir;
  const int steps = 3;
  const CudaTrace trace = run_and_load(dir, {build_path("TRAINING_LOOP"), "--steps", std::to_string(steps)});
  ASSERT_EQ(trace.images.size(), 1u);
  const ProcessImage& image = trace.images.front();
  expect_recorded_once(image);

  std::map<std::string, int> by_api;
  for (const Operation& op : image.operations) {
    ++by_api[op.api];
    if (is_runtime_api(op.api)) {
      EXPECT_TRUE(op.via_runtime()) << op.api;
      // The driver hook's details: the context and device it ran in.
      EXPECT_NE(op.launch.context | op.copy.context | op.set.context, 0u) << op.api;
    } else {
      EXPECT_TRUE(is_driver_api(op.api)) << op.api;
      EXPECT_FALSE(op.via_runtime()) << op.api;
    }
    EXPECT_FALSE(op.per_thread_variant()) << op.api;  // built without per-thread default streams
  }
  // <<<>>> launches: one record each (5 a step), the cuBLAS-like library's
  // 6 kernels a step under the driver's name; 2 cudaMemcpy + 2 batch
  // uploads a step + 1 loss read; 4 memsets.
  const std::map<std::string, int> expected = {{"cudaLaunchKernel", 5 * steps},
                                               {"cuLaunchKernel", 6 * steps},
                                               {"cudaMemcpy", 2},
                                               {"cudaMemcpyAsync", 2 * steps + 1},
                                               {"cudaMemsetAsync", 4}};
  EXPECT_EQ(by_api, expected) << describe(trace);

  // The runtime launches carry what only the driver knows: the function
  // (named), and the stream the program created for compute.
  std::set<uint64_t> created_streams;
  for (const HostCall& call : image.calls)
    if (call.kind == format::RecordKind::kObjectLifecycle &&
        call.lifecycle.object == static_cast<uint8_t>(format::ObjectKind::kStream) &&
        call.lifecycle.action == static_cast<uint8_t>(format::LifecycleAction::kCreate))
      created_streams.insert(call.lifecycle.handle);
  EXPECT_EQ(created_streams.size(), 2u);
  for (const Operation* launch : image.launches()) {
    EXPECT_NE(launch->kernel, "");
    EXPECT_TRUE(created_streams.count(launch->stream)) << launch->kernel;
    EXPECT_GT(launch->launch.grid.x, 0u);
  }
  for (const Operation* copy : image.copies()) {
    EXPECT_NE(copy->copy.direction, static_cast<uint8_t>(format::CopyDirection::kUnknown));
    if (copy->api == "cudaMemcpy") {
      EXPECT_EQ(copy->stream, format::kStreamLegacy);
    } else {
      EXPECT_TRUE(created_streams.count(copy->stream));
    }
  }
}

TEST(Attribution, TritonLaunchesKeepTheDriverName) {
  TempDir dir;
  const CudaTrace trace = run_and_load(dir, {build_path("TRITON_LIKE"), "--iterations", "3"});
  ASSERT_EQ(trace.images.size(), 1u);
  const ProcessImage& image = trace.images.front();
  expect_recorded_once(image);
  ASSERT_EQ(image.launches().size(), 6u);
  for (const Operation* launch : image.launches()) {
    EXPECT_EQ(launch->api, "cuLaunchKernel");
    EXPECT_FALSE(launch->via_runtime());
  }
  for (const Operation* copy : image.copies()) {
    EXPECT_EQ(copy->api, "cudaMemcpyAsync");
    EXPECT_TRUE(copy->via_runtime());
  }
}

void check_default_stream_program(bool per_thread) {
  TempDir dir;
  const int launches = 3;
  const CudaTrace trace =
      run_and_load(dir, {build_path(per_thread ? "STREAM_OPS_PER_THREAD" : "STREAM_OPS"), "--launches",
                         std::to_string(launches)});
  ASSERT_EQ(trace.images.size(), 1u);
  const ProcessImage& image = trace.images.front();
  expect_recorded_once(image);
  const uint64_t default_stream = per_thread ? format::kStreamPerThread : format::kStreamLegacy;
  std::map<std::string, int> by_api;
  for (const Operation& op : image.operations) {
    ++by_api[op.api];
    EXPECT_TRUE(op.via_runtime()) << op.api;
    EXPECT_EQ(op.per_thread_variant(), per_thread) << op.api;
    EXPECT_EQ(op.stream, default_stream) << op.api;
  }
  const std::map<std::string, int> expected = {{"cudaLaunchKernel", launches},
                                               {"cudaMemcpy", 2},
                                               {"cudaMemcpyAsync", 1},
                                               {"cudaMemset", 1},
                                               {"cudaMemsetAsync", 1}};
  EXPECT_EQ(by_api, expected) << describe(trace);
  // The synchronization of stream 0 names the same stream.
  bool synchronized = false;
  for (const HostCall* sync : image.syncs()) {
    if (sync->api != "cudaStreamSynchronize") continue;
    synchronized = true;
    EXPECT_EQ(sync->sync.stream, default_stream);
    EXPECT_EQ((sync->span.flags & format::kApiPerThreadStream) != 0, per_thread);
  }
  EXPECT_TRUE(synchronized);
}

TEST(Attribution, LegacyDefaultStream) { check_default_stream_program(false); }

TEST(Attribution, PerThreadDefaultStreamVariants) { check_default_stream_program(true); }

}  // namespace
}  // namespace proflaunch::e2e
