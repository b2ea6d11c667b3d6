// The documented host-synchronization rules of copies and memsets, measured
// with slow simulated links (0.5 GB/s in every direction, see meson.build) so
// that a 64 MiB transfer takes ~134 ms: long enough to tell "returned at once"
// from "returned after the copy" without flaking.
#include <cstring>
#include <vector>

#include "driver_test_support.h"

namespace {

constexpr size_t kBytes = 64u << 20;
constexpr double kBytesPerNs = 0.5;  // SIMGPU_*_GBPS=0.5
constexpr int64_t kTransferNs = int64_t(kBytes / kBytesPerNs);
constexpr int64_t kPromptNs = kTransferNs / 2;  // "returned at once" means well before the transfer ends

class SyncRulesTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    ASSERT_CU_OK(cuMemAlloc(&device_a_, kBytes));
    ASSERT_CU_OK(cuMemAlloc(&device_b_, kBytes));
  }
  void TearDown() override {
    cuMemFree(device_a_);
    cuMemFree(device_b_);
    DriverTest::TearDown();
  }
  CUdeviceptr device_a_ = 0, device_b_ = 0;
};

template <class Call>
int64_t call_duration_ns(Call&& call) {
  const int64_t start = host_now_ns();
  EXPECT_EQ(CUDA_SUCCESS, call());
  return host_now_ns() - start;
}

TEST_F(SyncRulesTest, SyncDeviceToDeviceCopyDoesNotBlockTheHost) {
  EXPECT_LT(call_duration_ns([&] { return cuMemcpyDtoD(device_b_, device_a_, kBytes); }), kPromptNs);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(CU_STREAM_LEGACY)) << "the copy is still running";
  ASSERT_CU_OK(cuCtxSynchronize());
}

TEST_F(SyncRulesTest, SyncMemsetOfDeviceMemoryDoesNotBlockButOfPinnedMemoryDoes) {
  EXPECT_LT(call_duration_ns([&] { return cuMemsetD8(device_a_, 3, kBytes); }), kPromptNs);
  EXPECT_CU(CUDA_ERROR_NOT_READY, cuStreamQuery(CU_STREAM_LEGACY));
  ASSERT_CU_OK(cuCtxSynchronize());
  void* pinned = nullptr;
  ASSERT_CU_OK(cuMemAllocHost(&pinned, kBytes));
  EXPECT_GE(call_duration_ns([&] { return cuMemsetD8(CUdeviceptr(pinned), 4, kBytes); }), kTransferNs);
  EXPECT_EQ(4, static_cast<uint8_t*>(pinned)[kBytes - 1]);
  ASSERT_CU_OK(cuMemFreeHost(pinned));
}

TEST_F(SyncRulesTest, SyncCopiesWithTheHostBlockUntilDone) {
  std::vector<uint8_t> pageable(kBytes, 9);
  EXPECT_GE(call_duration_ns([&] { return cuMemcpyHtoD(device_a_, pageable.data(), kBytes); }), kTransferNs);
  EXPECT_CU_OK(cuStreamQuery(CU_STREAM_LEGACY));
  std::fill(pageable.begin(), pageable.end(), 0);
  EXPECT_GE(call_duration_ns([&] { return cuMemcpyDtoH(pageable.data(), device_a_, kBytes); }), kTransferNs);
  EXPECT_EQ(9, pageable[kBytes / 2]);
}

TEST_F(SyncRulesTest, AsyncCopiesReturnAtOnceUnlessMemoryIsPageable) {
  void* pinned = nullptr;
  ASSERT_CU_OK(cuMemAllocHost(&pinned, kBytes));
  CUstream stream = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUevent start = nullptr, end = nullptr;
  ASSERT_CU_OK(cuEventCreate(&start, 0));
  ASSERT_CU_OK(cuEventCreate(&end, 0));
  ASSERT_CU_OK(cuEventRecord(start, stream));
  EXPECT_LT(call_duration_ns([&] { return cuMemcpyHtoDAsync(device_a_, pinned, kBytes, stream); }), kPromptNs);
  ASSERT_CU_OK(cuEventRecord(end, stream));
  ASSERT_CU_OK(cuEventSynchronize(end));
  const float modelled_ms = float(kTransferNs) / 1e6f;
  EXPECT_GE(elapsed_ms(start, end), modelled_ms) << "bytes / SIMGPU_H2D_GBPS";
  EXPECT_LT(elapsed_ms(start, end), modelled_ms + 40.0f);

  std::vector<uint8_t> pageable(kBytes);
  EXPECT_GE(call_duration_ns([&] { return cuMemcpyDtoHAsync(pageable.data(), device_a_, kBytes, stream); }),
            kTransferNs)
      << "pageable memory: synchronous";
  ASSERT_CU_OK(cuStreamDestroy(stream));
  ASSERT_CU_OK(cuMemFreeHost(pinned));
}

}  // namespace
