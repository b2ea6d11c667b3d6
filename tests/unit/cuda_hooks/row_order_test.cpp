// The order in which a stream operation's row works around the real call
// (gpu_timing.h): the timing backend's start event right before it, its end
// event right after it, before the hook writes its record or takes its call
// stack, and the operation handed over for resolution only once both are
// committed. Anything the hook did between the real call and the end event
// would be measured as GPU time on an idle stream: the defect this guards
// against stretched a 6 us kernel to 0.4 ms with stacks on.
//
// A fake backend notes what the thread's ring held at each step.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "preload/cuda/gpu_timing_events.h"
#include "preload/cuda/pending_operations.h"
#include "preload/cuda/rows/rows.h"
#include "preload/process/lifecycle.h"
#include "preload/stacks/stacks.h"
#include "tests/unit/preload/support/process_runner.h"

namespace proflaunch::cuda {
namespace {

uint64_t committed() { return tls_thread_buffer != nullptr ? tls_thread_buffer->committed_bytes() : 0; }

struct Step {
  std::string what;
  uint64_t committed_bytes;
};

class WatchingBackend final : public GpuTimingBackend {
 public:
  std::vector<Step> steps;
  int token_value = 0x5eed;
  bool can_time = true;  // false: before() cannot take a start event

  TimingToken before(CUstream, CUcontext, Submission, bool) noexcept override {
    steps.push_back({"before", committed()});
    TimingToken token;
    if (can_time) token.start = &token_value;  // any non-null: the hooks pass it on
    return token;
  }
  void returned(TimingToken&, CUstream, bool submitted) noexcept override {
    steps.push_back({submitted ? "returned" : "refused", committed()});
  }
  void queue(const TimingToken& token, const GpuOperation& op) noexcept override {
    steps.push_back({std::string(token.start == nullptr ? "untimed " : "queue ") + std::to_string(static_cast<int>(op.kind)),
                     committed()});
  }
  void release(const TimingToken&) noexcept override {}
  void* lock_submissions(CUcontext, CUstream) noexcept override { return nullptr; }
  void unlock_submissions(void*) noexcept override {}
  void before_context_teardown(CUcontext) noexcept override {}
  void after_context_teardown(CUcontext, bool) noexcept override {}
};

// A stand-in for a generated hook: what the rows read of one.
struct FakeHook {
  static constexpr uint16_t api = 17;
  static constexpr bool per_thread = false;
  static constexpr Library library = Library::kDriver;
};

class RowOrder : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static testing::TempDir dir;
    Config config;
    std::strcpy(config.parts_dir, dir.path().c_str());
    config.buffer_bytes_per_thread = kMinBufferBytes * 16;
    config.flush_interval_ms = 20;
    config.stack_depth = kDefaultStackDepth;
    ASSERT_TRUE(runtime::start(config));
    stacks::start_stacks(config);
  }
  void SetUp() override { use_gpu_timing_backend(&backend_); }
  void TearDown() override { use_gpu_timing_backend(nullptr); }

  // Runs a row around a real call that notes itself, and checks the order.
  template <typename Describe>
  void expect_order(Describe&& describe, format::GpuActivityKind kind) {
    backend_.steps.clear();
    const CUresult result = std::decay_t<decltype(describe())>::template run<FakeHook>(describe, [&] {
      backend_.steps.push_back({"real call", committed()});
      return CUDA_SUCCESS;
    });
    ASSERT_EQ(result, CUDA_SUCCESS);
    ASSERT_EQ(backend_.steps.size(), 4u);
    EXPECT_EQ(backend_.steps[0].what, "before");
    EXPECT_EQ(backend_.steps[1].what, "real call");
    EXPECT_EQ(backend_.steps[2].what, "returned") << "the end event comes right after the real call";
    EXPECT_EQ(backend_.steps[3].what, "queue " + std::to_string(static_cast<int>(kind)));
    const uint64_t at_call = backend_.steps[1].committed_bytes;
    EXPECT_EQ(backend_.steps[0].committed_bytes, at_call);
    EXPECT_EQ(backend_.steps[2].committed_bytes, at_call)
        << "nothing is written between the real call and the end event";
    // The record and its call stack: both committed before the hand-over.
    // (MemorySet is the smallest of the four records.)
    EXPECT_GE(backend_.steps[3].committed_bytes,
              at_call + slot_stride(sizeof(format::MemorySetRecord)) + slot_stride(sizeof(format::CallStackRecord)));
  }

  WatchingBackend backend_;
};

TEST_F(RowOrder, KernelLaunch) {
  int dummy = 0;
  expect_order([&] { return rows::launch(reinterpret_cast<CUfunction>(&dummy), {1, 1, 1}, {32, 1, 1}, 0, nullptr); },
               format::GpuActivityKind::kKernel);
}

TEST_F(RowOrder, HostFunction) {
  expect_order([] { return rows::host_function(&RowOrder::SetUpTestSuite, nullptr); },
               format::GpuActivityKind::kHostFunction);
}

TEST_F(RowOrder, Copy) {
  static char host[64];
  expect_order([] { return rows::copy(rows::device_memory(CUdeviceptr{0x1000}), rows::host_memory(host), 64); },
               format::GpuActivityKind::kMemoryCopy);
}

TEST_F(RowOrder, MemorySet) {
  expect_order([] { return rows::memory_set(CUdeviceptr{0x1000}, 0, 4, 16, 1, nullptr); },
               format::GpuActivityKind::kMemorySet);
}

// A refused operation gives its events back and is never handed over.
TEST_F(RowOrder, RefusedWorkIsNotQueued) {
  backend_.steps.clear();
  int dummy = 0;
  auto describe = [&] {
    return rows::launch(reinterpret_cast<CUfunction>(&dummy), {1, 1, 1}, {1, 1, 1}, 0, nullptr);
  };
  const CUresult result = LaunchRow::run<FakeHook>(describe, [] { return CUDA_ERROR_INVALID_VALUE; });
  EXPECT_EQ(result, CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(backend_.steps.size(), 2u);
  EXPECT_EQ(backend_.steps[0].what, "before");
  EXPECT_EQ(backend_.steps[1].what, "refused");
}

// Work that runs but could not get a start event is still handed to the
// backend, which counts it as lost rather than dropping it silently.
TEST_F(RowOrder, UntimedWorkIsHandedOverToBeCounted) {
  backend_.steps.clear();
  backend_.can_time = false;
  int dummy = 0;
  auto describe = [&] {
    return rows::launch(reinterpret_cast<CUfunction>(&dummy), {1, 1, 1}, {1, 1, 1}, 0, nullptr);
  };
  EXPECT_EQ(LaunchRow::run<FakeHook>(describe, [] { return CUDA_SUCCESS; }), CUDA_SUCCESS);
  backend_.can_time = true;
  ASSERT_FALSE(backend_.steps.empty());
  EXPECT_EQ(backend_.steps.back().what, "untimed " + std::to_string(static_cast<int>(format::GpuActivityKind::kKernel)));
}

TEST(EventTiming, CountsWorkHandedOverWithoutAStartEvent) {
  GpuTimingBackend* events = event_timing_backend();
  ASSERT_NE(events, nullptr);
  take_queue_overflow_count();
  events->queue(TimingToken{}, GpuOperation{1, format::kStreamLegacy, 0, format::GpuActivityKind::kKernel});
  EXPECT_EQ(take_queue_overflow_count(), 1u) << "reported as a LOST kGpuTimingUnresolved by the writer";
}

}  // namespace
}  // namespace proflaunch::cuda
