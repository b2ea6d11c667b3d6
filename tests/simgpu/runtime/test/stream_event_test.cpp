// Streams, events and host callbacks. The meson test runs this with slow
// simulated copies (SIMGPU_H2D_GBPS=1: one byte per nanosecond), so a few
// MiB keep a stream busy for milliseconds and "not finished yet" is
// observable without timing races. The host side is pinned: an asynchronous
// copy from pageable memory returns only once it is done (the driver has to
// stage the data), on the simulator as on real hardware.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

// What a program built with --default-stream per-thread calls instead.
extern "C" cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind,
                                            cudaStream_t);
extern "C" cudaError_t cudaStreamQuery_ptsz(cudaStream_t);
extern "C" cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);

namespace {

constexpr size_t kSlowCopyBytes = 8 << 20;  // ~8 ms at 1 byte/ns

class RuntimeStreams : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&device_, kSlowCopyBytes), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(&pinned_, kSlowCopyBytes), cudaSuccess);
    std::memset(pinned_, 0x3C, kSlowCopyBytes);
  }
  void TearDown() override {
    EXPECT_EQ(cudaFree(device_), cudaSuccess);
    EXPECT_EQ(cudaFreeHost(pinned_), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
  void* device_ = nullptr;
  void* pinned_ = nullptr;
};

TEST_F(RuntimeStreams, FlagsAndPrioritiesAreReportedBack) {
  int least = 0;
  int greatest = 0;
  ASSERT_EQ(cudaDeviceGetStreamPriorityRange(&least, &greatest), cudaSuccess);
  EXPECT_LE(greatest, least);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, greatest), cudaSuccess);
  unsigned int flags = 0;
  int priority = 0;
  ASSERT_EQ(cudaStreamGetFlags(stream, &flags), cudaSuccess);
  ASSERT_EQ(cudaStreamGetPriority(stream, &priority), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, cudaStreamNonBlocking);
  EXPECT_EQ(priority, greatest);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeStreams, QueryIsNotReadyWhileACopyRunsAndNotReadyIsNotAnError) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(device_, pinned_, kSlowCopyBytes, cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeStreams, EventsBracketWorkAndMeasureIt) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&stop, cudaEventDefault), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(device_, pinned_, kSlowCopyBytes, cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_EQ(cudaEventRecordWithFlags(stop, stream, cudaEventRecordDefault), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(stop), cudaErrorNotReady);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(stop), cudaSuccess);
  float elapsed_ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&elapsed_ms, start, stop), cudaSuccess);
  // 8 MiB at 1 byte/ns is 8.4 ms of modelled transfer.
  EXPECT_GT(elapsed_ms, 4.0f);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeStreams, TimingDisabledEventsRefuseElapsedTime) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&start, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&stop, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
  float elapsed_ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&elapsed_ms, start, stop), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(stop), cudaSuccess);
}

TEST_F(RuntimeStreams, WaitEventOrdersWorkAcrossStreams) {
  cudaStream_t producer = nullptr;
  cudaStream_t consumer = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t produced = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(
      cudaMemcpyAsync(device_, pinned_, kSlowCopyBytes, cudaMemcpyHostToDevice, producer),
      cudaSuccess);
  ASSERT_EQ(cudaEventRecord(produced, producer), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(consumer, produced, 0), cudaSuccess);
  cudaEvent_t consumed = nullptr;
  ASSERT_EQ(cudaEventCreate(&consumed), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(consumed, consumer), cudaSuccess);
  // The consumer has nothing of its own queued, yet must wait for the copy.
  EXPECT_EQ(cudaEventQuery(consumed), cudaErrorNotReady);
  ASSERT_EQ(cudaStreamSynchronize(consumer), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(producer), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(produced), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(consumed), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(producer), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(consumer), cudaSuccess);
}

TEST_F(RuntimeStreams, DeviceSynchronizeWaitsForEveryStream) {
  cudaStream_t streams[2] = {};
  const size_t half = kSlowCopyBytes / 2;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), cudaSuccess);
    // Each stream its own half: concurrent streams must not write the same bytes.
    ASSERT_EQ(cudaMemcpyAsync(static_cast<char*>(device_) + i * half,
                              static_cast<char*>(pinned_) + i * half, half,
                              cudaMemcpyHostToDevice, streams[i]),
              cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (cudaStream_t stream : streams) {
    EXPECT_EQ(cudaStreamQuery(stream), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  }
}

TEST_F(RuntimeStreams, HostFunctionsRunAfterThePrecedingWork) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  using Clock = std::chrono::steady_clock;
  struct Observation {
    std::atomic<int64_t> ran_at_ns{0};
  } observation;
  Clock::time_point enqueued_at = Clock::now();
  ASSERT_EQ(cudaMemcpyAsync(device_, pinned_, kSlowCopyBytes, cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_EQ(cudaLaunchHostFunc(
                stream,
                [](void* data) {
                  static_cast<Observation*>(data)->ran_at_ns.store(
                      std::chrono::duration_cast<std::chrono::nanoseconds>(
                          Clock::now().time_since_epoch())
                          .count());
                },
                &observation),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_NE(observation.ran_at_ns.load(), 0);
  auto waited =
      std::chrono::nanoseconds(observation.ran_at_ns.load()) - enqueued_at.time_since_epoch();
  // The copy ahead of it is modelled at ~8 ms.
  EXPECT_GT(waited, std::chrono::milliseconds(4));
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeStreams, StreamCallbacksGetTheirStreamStatusAndData) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  struct Seen {
    cudaStream_t stream = nullptr;
    cudaError_t status = cudaErrorUnknown;
    int calls = 0;
  } seen;
  ASSERT_EQ(cudaMemcpyAsync(device_, pinned_, 4096, cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamAddCallback(
                stream,
                [](cudaStream_t callback_stream, cudaError_t status, void* data) {
                  auto* record = static_cast<Seen*>(data);
                  record->stream = callback_stream;
                  record->status = status;
                  ++record->calls;
                },
                &seen, 0),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.stream, stream);
  EXPECT_EQ(seen.status, cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeStreams, CaptureGoesThroughTheDriver) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(stream, &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(device_, 0x5A, 4096, stream), cudaSuccess);
  unsigned long long id = 0;
  cudaGraph_t graph_so_far = nullptr;
  const cudaGraphNode_t* dependencies = nullptr;
  size_t count = 0;
  ASSERT_EQ(cudaStreamGetCaptureInfo(stream, &status, &id, &graph_so_far, &dependencies, nullptr, &count),
            cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  EXPECT_NE(id, 0u);
  EXPECT_EQ(count, 1u);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  EXPECT_EQ(graph, graph_so_far);
  size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 1u);
  // The captured memset did not run; a launch of the graph does.
  std::vector<uint8_t> back(4096, 0);
  ASSERT_EQ(cudaMemcpy(back.data(), device_, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_NE(back, std::vector<uint8_t>(4096, 0x5A));
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back.data(), device_, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, std::vector<uint8_t>(4096, 0x5A));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);

  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  ASSERT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  EXPECT_EQ(mode, cudaStreamCaptureModeGlobal);  // the documented initial mode
  ASSERT_EQ(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
  EXPECT_EQ(mode, cudaStreamCaptureModeRelaxed);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(RuntimeStreams, PerThreadDefaultStreamEntryPoints) {
  std::vector<uint8_t> back(4096, 0);
  ASSERT_EQ(
      cudaMemcpyAsync_ptsz(device_, pinned_, kSlowCopyBytes, cudaMemcpyHostToDevice, nullptr),
      cudaSuccess);
  EXPECT_EQ(cudaStreamQuery_ptsz(nullptr), cudaErrorNotReady);
  // The legacy default stream is a different stream, but it synchronizes
  // with blocking streams, the per-thread one included: a legacy-stream
  // copy therefore sees the data.
  ASSERT_EQ(cudaMemcpy(back.data(), device_, back.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, std::vector<uint8_t>(4096, 0x3C));
  ASSERT_EQ(cudaStreamSynchronize_ptsz(nullptr), cudaSuccess);
  EXPECT_EQ(cudaStreamQuery(cudaStreamPerThread), cudaSuccess);
}

}  // namespace
