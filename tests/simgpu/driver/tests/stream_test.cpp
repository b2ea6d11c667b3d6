// Streams really run concurrently, one stream never overlaps itself, events
// measure the modelled durations, and the legacy/blocking/non-blocking/
// per-thread default stream rules of the CUDA docs hold.
#include <cudaTypedefs.h>

#include <atomic>
#include <thread>
#include <vector>

#include "timing_kernels.h"

namespace {

using StreamTest = TimingTest;

// Generous: the machine running the tests may be busy. Lower bounds are exact.
constexpr float kSlackMs = 40.0f;
constexpr float kLongMs = kLongKernelNs / 1e6f;
constexpr float kMediumMs = kMediumKernelNs / 1e6f;

TEST_F(StreamTest, KernelsOnTwoStreamsOverlapInTime) {
  CUstream first = nullptr, second = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&first, CU_STREAM_NON_BLOCKING));
  ASSERT_CU_OK(cuStreamCreate(&second, CU_STREAM_NON_BLOCKING));
  const int64_t wall_start_ns = host_now_ns();
  CUevent first_start = record(first);
  ASSERT_CU_OK(launch(long_kernel_, first));
  CUevent first_end = record(first);
  CUevent second_start = record(second);
  ASSERT_CU_OK(launch(long_kernel_, second));
  CUevent second_end = record(second);
  ASSERT_CU_OK(cuCtxSynchronize());
  const float wall_ms = float(host_now_ns() - wall_start_ns) / 1e6f;

  const float second_start_ms = elapsed_ms(first_start, second_start);
  const float second_end_ms = elapsed_ms(first_start, second_end);
  const float first_end_ms = elapsed_ms(first_start, first_end);
  EXPECT_GE(first_end_ms, kLongMs);
  EXPECT_GE(second_end_ms - second_start_ms, kLongMs);
  EXPECT_LT(second_start_ms, first_end_ms) << "the second stream started before the first finished";
  EXPECT_LT(wall_ms, 2 * kLongMs - 20.0f) << "two 100 ms kernels on two streams took " << wall_ms << " ms";
}

TEST_F(StreamTest, KernelsOnOneStreamNeverOverlap) {
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  const int64_t wall_start_ns = host_now_ns();
  CUevent before = record(stream);
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  CUevent between = record(stream);
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  CUevent after = record(stream);
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  const int64_t wall_ns = host_now_ns() - wall_start_ns;
  EXPECT_GE(elapsed_ms(before, between), kMediumMs);
  EXPECT_GE(elapsed_ms(between, after), kMediumMs);
  EXPECT_GE(wall_ns, int64_t(2 * kMediumKernelNs)) << "the host cannot see completion before the modelled end";
}

TEST_F(StreamTest, EventsMeasureTheModelledDurations) {
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  const unsigned long long costs_ns[] = {10'000, 250'000, 3'000'000, 15'000'000};
  for (unsigned long long cost_ns : costs_ns) {
    ASSERT_EQ(0, simgpuSetKernelCost("short_kernel", cost_ns, 0));
    CUevent start = record(stream);
    ASSERT_CU_OK(launch(short_kernel_, stream));
    CUevent end = record(stream);
    ASSERT_CU_OK(cuEventSynchronize(end));
    const float measured = elapsed_ms(start, end);
    EXPECT_GE(measured, float(cost_ns) / 1e6f) << cost_ns << " ns kernel";
    EXPECT_LT(measured, float(cost_ns) / 1e6f + kSlackMs) << cost_ns << " ns kernel";
  }
}

TEST_F(StreamTest, WavesMultiplyThePerWaveCost) {
  int sm_count = 0;
  ASSERT_CU_OK(cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
  ASSERT_EQ(0, simgpuSetKernelCost("short_kernel", 1'000'000, 4'000'000));
  CUevent start = record(nullptr);
  // 4 * SM count blocks: four waves.
  ASSERT_CU_OK(cuLaunchKernel(short_kernel_, unsigned(sm_count), 2, 2, 128, 1, 1, 0, nullptr, nullptr, nullptr));
  CUevent end = record(nullptr);
  ASSERT_CU_OK(cuEventSynchronize(end));
  EXPECT_GE(elapsed_ms(start, end), 17.0f);
  EXPECT_LT(elapsed_ms(start, end), 17.0f + kSlackMs);
}

TEST_F(StreamTest, LegacyStreamWaitsForBlockingStreams) {
  CUstream blocking = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  ASSERT_CU_OK(launch(long_kernel_, blocking));
  CUevent blocking_done = record(blocking);
  ASSERT_CU_OK(launch(short_kernel_, nullptr));  // legacy default stream
  CUevent legacy_done = record(nullptr);
  ASSERT_CU_OK(cuEventSynchronize(legacy_done));
  EXPECT_GE(elapsed_ms(blocking_done, legacy_done), float(kShortKernelNs) / 1e6f)
      << "legacy work must start after the blocking stream's earlier work";
}

TEST_F(StreamTest, BlockingStreamsWaitForLegacyStream) {
  CUstream blocking = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  ASSERT_CU_OK(launch(long_kernel_, CU_STREAM_LEGACY));
  CUevent legacy_done = record(CU_STREAM_LEGACY);
  ASSERT_CU_OK(launch(short_kernel_, blocking));
  CUevent blocking_done = record(blocking);
  ASSERT_CU_OK(cuEventSynchronize(blocking_done));
  EXPECT_GE(elapsed_ms(legacy_done, blocking_done), float(kShortKernelNs) / 1e6f);
}

TEST_F(StreamTest, NonBlockingStreamsIgnoreTheLegacyStream) {
  CUstream non_blocking = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&non_blocking, CU_STREAM_NON_BLOCKING));
  ASSERT_CU_OK(launch(long_kernel_, nullptr));
  CUevent legacy_done = record(nullptr);
  ASSERT_CU_OK(launch(short_kernel_, non_blocking));
  CUevent non_blocking_done = record(non_blocking);
  ASSERT_CU_OK(cuEventSynchronize(non_blocking_done));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventQuery(legacy_done)) << "finished long before the legacy kernel";
  ASSERT_CU_OK(cuEventSynchronize(legacy_done));
  EXPECT_LT(elapsed_ms(legacy_done, non_blocking_done), 0.0f);

  // And the legacy stream does not wait for it either.
  ASSERT_CU_OK(launch(long_kernel_, non_blocking));
  ASSERT_CU_OK(launch(short_kernel_, nullptr));
  CUevent legacy_short = record(nullptr);
  CUevent after_long = record(non_blocking);
  ASSERT_CU_OK(cuEventSynchronize(legacy_short));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventQuery(after_long));
}

TEST_F(StreamTest, PerThreadDefaultStreamsAreBlockingStreamsOfTheirThread) {
  void* launch_ptsz = nullptr;
  void* stream_id_ptsz = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_CU_OK(
      cuGetProcAddress("cuLaunchKernel", &launch_ptsz, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
  ASSERT_CU_OK(cuGetProcAddress("cuStreamGetId", &stream_id_ptsz, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                                &status));
  auto launch_per_thread = reinterpret_cast<PFN_cuLaunchKernel_v7000_ptsz>(launch_ptsz);
  auto stream_id_per_thread = reinterpret_cast<PFN_cuStreamGetId_v12000_ptsz>(stream_id_ptsz);

  unsigned long long legacy_id = 0, per_thread_id = 0, null_ptsz_id = 0, explicit_id = 0;
  ASSERT_CU_OK(cuStreamGetId(nullptr, &legacy_id));
  ASSERT_CU_OK(stream_id_per_thread(nullptr, &null_ptsz_id));
  ASSERT_CU_OK(cuStreamGetId(CU_STREAM_PER_THREAD, &explicit_id));
  ASSERT_CU_OK(cuStreamGetId(CU_STREAM_LEGACY, &per_thread_id));
  EXPECT_EQ(legacy_id, per_thread_id) << "NULL means the legacy stream in the plain variant";
  EXPECT_NE(legacy_id, null_ptsz_id) << "NULL means the per-thread stream in the _ptsz variant";
  EXPECT_EQ(explicit_id, null_ptsz_id);

  // Two threads' per-thread streams are distinct and run concurrently.
  std::atomic<unsigned long long> other_thread_id{0};
  CUevent other_start = nullptr, other_end = nullptr;
  ASSERT_CU_OK(cuEventCreate(&other_start, 0));
  ASSERT_CU_OK(cuEventCreate(&other_end, 0));
  CUevent mine_start = record(CU_STREAM_PER_THREAD);
  ASSERT_CU_OK(launch_per_thread(long_kernel_, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
  CUevent mine_end = record(CU_STREAM_PER_THREAD);
  std::thread other([&] {
    cuCtxSetCurrent(context_);
    unsigned long long id = 0;
    stream_id_per_thread(nullptr, &id);
    other_thread_id = id;
    cuEventRecord(other_start, CU_STREAM_PER_THREAD);
    launch_per_thread(long_kernel_, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    cuEventRecord(other_end, CU_STREAM_PER_THREAD);
    cuEventSynchronize(other_end);
  });
  other.join();
  ASSERT_CU_OK(cuEventSynchronize(mine_end));
  EXPECT_NE(null_ptsz_id, other_thread_id.load());
  EXPECT_LT(elapsed_ms(mine_start, other_start), elapsed_ms(mine_start, mine_end)) << "they overlapped";

  // The per-thread stream waits for earlier legacy work, like any blocking stream.
  ASSERT_CU_OK(launch(medium_kernel_, CU_STREAM_LEGACY));
  CUevent legacy_done = record(CU_STREAM_LEGACY);
  ASSERT_CU_OK(launch_per_thread(short_kernel_, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
  CUevent per_thread_done = record(CU_STREAM_PER_THREAD);
  ASSERT_CU_OK(cuEventSynchronize(per_thread_done));
  EXPECT_GE(elapsed_ms(legacy_done, per_thread_done), float(kShortKernelNs) / 1e6f);
}

TEST_F(StreamTest, StreamWaitEventOrdersWorkAcrossStreams) {
  CUstream producer = nullptr, consumer = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&producer, CU_STREAM_NON_BLOCKING));
  ASSERT_CU_OK(cuStreamCreate(&consumer, CU_STREAM_NON_BLOCKING));
  ASSERT_CU_OK(launch(medium_kernel_, producer));
  CUevent produced = record(producer);
  ASSERT_CU_OK(cuStreamWaitEvent(consumer, produced, 0));
  ASSERT_CU_OK(launch(short_kernel_, consumer));
  CUevent consumed = record(consumer);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(consumer));
  ASSERT_CU_OK(cuStreamSynchronize(consumer));
  EXPECT_CU_OK(cuStreamQuery(consumer));
  EXPECT_GE(elapsed_ms(produced, consumed), float(kShortKernelNs) / 1e6f);
}

void record_host_time(void* slot) { *static_cast<int64_t*>(slot) = host_now_ns(); }

TEST_F(StreamTest, HostFunctionsRunInStreamOrder) {
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  const int64_t submitted_ns = host_now_ns();
  int64_t ran_at_ns = 0;
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  ASSERT_CU_OK(cuLaunchHostFunc(stream, record_host_time, &ran_at_ns));
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  EXPECT_GE(ran_at_ns - submitted_ns, int64_t(kMediumKernelNs)) << "ran only after the kernel";
}

TEST_F(StreamTest, DestroyingAStreamLetsItsWorkFinish) {
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, 0));
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  CUevent done = record(stream);
  const int64_t before_ns = host_now_ns();
  ASSERT_CU_OK(cuStreamDestroy(stream));
  EXPECT_LT(host_now_ns() - before_ns, int64_t(kMediumKernelNs)) << "cuStreamDestroy does not wait";
  ASSERT_CU_OK(cuEventSynchronize(done));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(stream));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(stream));
}

TEST_F(StreamTest, StreamPropertiesAreReported) {
  int least = 0, greatest = 0;
  ASSERT_CU_OK(cuCtxGetStreamPriorityRange(&least, &greatest));
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreateWithPriority(&stream, CU_STREAM_NON_BLOCKING, greatest - 10));
  int priority = 0;
  unsigned flags = 0;
  CUcontext context = nullptr;
  CUdevice device = -1;
  ASSERT_CU_OK(cuStreamGetPriority(stream, &priority));
  ASSERT_CU_OK(cuStreamGetFlags(stream, &flags));
  ASSERT_CU_OK(cuStreamGetCtx(stream, &context));
  ASSERT_CU_OK(cuStreamGetDevice(stream, &device));
  EXPECT_EQ(greatest, priority) << "clamped into the range";
  EXPECT_EQ(unsigned(CU_STREAM_NON_BLOCKING), flags);
  EXPECT_EQ(context_, context);
  EXPECT_EQ(device_, device);
  CUstream other = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&other, 0));
  unsigned long long id = 0, other_id = 0;
  ASSERT_CU_OK(cuStreamGetId(stream, &id));
  ASSERT_CU_OK(cuStreamGetId(other, &other_id));
  EXPECT_NE(id, other_id);
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(&other, 0x100));
}

TEST_F(StreamTest, EventErrorsFollowTheDocumentation) {
  CUevent never = nullptr, untimed = nullptr;
  ASSERT_CU_OK(cuEventCreate(&never, 0));
  ASSERT_CU_OK(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  EXPECT_CU_OK(cuEventQuery(never)) << "a never-recorded event counts as complete";
  CUevent recorded = record(nullptr);
  ASSERT_CU_OK(cuEventSynchronize(recorded));
  float ms = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, never, recorded));
  ASSERT_CU_OK(cuEventRecord(untimed, nullptr));
  ASSERT_CU_OK(cuEventSynchronize(untimed));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, recorded, untimed));
  ASSERT_CU_OK(launch(medium_kernel_, nullptr));
  CUevent pending = record(nullptr);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventQuery(pending));
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuEventElapsedTime(&ms, recorded, pending));
  ASSERT_CU_OK(cuEventSynchronize(pending));
  EXPECT_CU_OK(cuEventElapsedTime(&ms, recorded, pending));
  ASSERT_CU_OK(cuEventDestroy(never));
  EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(never));
}

TEST_F(StreamTest, CooperativeAndExtendedLaunchesAreChecked) {
  CUfunction cooperative = nullptr;
  ASSERT_CU_OK(cuModuleGetFunction(&cooperative, module_, "cooperative_kernel"));
  int sm_count = 0;
  ASSERT_CU_OK(cuDeviceGetAttribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_));
  int per_sm = 0;
  ASSERT_CU_OK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cooperative, 1024, 0));
  EXPECT_EQ(2, per_sm) << "2048 threads per SM / 1024";
  CUdeviceptr unused = 0;
  void* args[] = {&unused};
  EXPECT_CU_OK(cuLaunchCooperativeKernel(cooperative, unsigned(sm_count * per_sm), 1, 1, 1024, 1, 1, 0, nullptr, args));
  EXPECT_CU(
      CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
      cuLaunchCooperativeKernel(cooperative, unsigned(sm_count * per_sm + 1), 1, 1, 1024, 1, 1, 0, nullptr, args));

  CUlaunchAttribute attributes[2] = {};
  attributes[0].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attributes[0].value.cooperative = 1;
  attributes[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attributes[1].value.clusterDim.x = 2;
  attributes[1].value.clusterDim.y = 1;
  attributes[1].value.clusterDim.z = 1;
  CUlaunchConfig config{};
  config.gridDimX = 4;
  config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 256;
  config.blockDimY = config.blockDimZ = 1;
  config.attrs = attributes;
  config.numAttrs = 2;
  EXPECT_CU_OK(cuLaunchKernelEx(&config, cooperative, args, nullptr));
  config.gridDimX = 3;
  EXPECT_CU(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuLaunchKernelEx(&config, cooperative, args, nullptr))
      << "the grid must be a whole number of clusters";
  config.gridDimX = unsigned(sm_count * 8 + 2);
  EXPECT_CU(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, cuLaunchKernelEx(&config, cooperative, args, nullptr));
  ASSERT_CU_OK(cuCtxSynchronize());
}

}  // namespace
