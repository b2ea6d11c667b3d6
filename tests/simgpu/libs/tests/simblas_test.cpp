// libsimblas on the simulated driver. Every kernel gets its own modelled
// duration, so the device time between two events tells which kernels a
// call launched, on which stream, with how many blocks.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "simblas.h"
#include "test_driver.h"

namespace {

constexpr const char* kAmpereNN = "ampere_sgemm_128x64_nn";
constexpr const char* kAmpereNT = "ampere_sgemm_128x64_nt";
constexpr const char* kAmpereTN = "ampere_sgemm_128x64_tn";
constexpr const char* kCutlassNN =
    "_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4EEvNT_6ParamsE";
constexpr const char* kCutlassTN =
    "_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4EEvNT_6ParamsE";
constexpr const char* kSplitKReduce =
    "_Z19splitKreduce_kernelILi32ELi16EiffLb1ELb0EEv19simblasSplitKParamsIfEPKT2_PT3_";
constexpr const char* kXmmaF16NN =
    "sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_"
    "k_off_kernel__5x_cublas";

constexpr size_t kMatrixFloats = size_t(1) << 22;  // big enough for every shape below

class SimblasTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    driver_ = new TestDriver;
    if (!driver_->load()) return;
    // Distinct durations: any other kernel, or an extra one, shows up in
    // the measured time. No per-wave term unless a test sets one.
    const struct {
      const char* name;
      unsigned long long fixed_us;
    } costs[] = {{kAmpereNN, 700},   {kAmpereNT, 900},     {kAmpereTN, 1100},
                 {kCutlassNN, 300},  {kCutlassTN, 350},    {kSplitKReduce, 40},
                 {kXmmaF16NN, 1300}, {"*", 5}};
    for (const auto& cost : costs) driver_->set_kernel_cost(cost.name, cost.fixed_us * 1000, 0);
  }

  void SetUp() override {
    ASSERT_TRUE(driver_->error.empty()) << driver_->error;
    ASSERT_EQ(simblasCreate(&handle_), SIMBLAS_STATUS_SUCCESS);
    ASSERT_EQ(driver_->stream_create(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(simblasSetStream(handle_, stream_), SIMBLAS_STATUS_SUCCESS);
    for (CUdeviceptr* matrix : {&a_, &b_, &c_})
      ASSERT_EQ(driver_->mem_alloc(matrix, kMatrixFloats * sizeof(float)), CUDA_SUCCESS);
  }

  void TearDown() override {
    for (CUdeviceptr matrix : {a_, b_, c_}) driver_->mem_free(matrix);
    driver_->stream_destroy(stream_);
    EXPECT_EQ(simblasDestroy(handle_), SIMBLAS_STATUS_SUCCESS);
  }

  simblasStatus_t sgemm(simblasOperation_t ta, simblasOperation_t tb, int m, int n, int k) {
    const float alpha = 1.f, beta = 0.f;
    const int lda = ta == SIMBLAS_OP_N ? m : k, ldb = tb == SIMBLAS_OP_N ? k : n;
    return simblasSgemm(handle_, ta, tb, m, n, k, &alpha, reinterpret_cast<const float*>(a_), lda,
                        reinterpret_cast<const float*>(b_), ldb, &beta,
                        reinterpret_cast<float*>(c_), m);
  }

  double sgemm_duration_us(simblasOperation_t ta, simblasOperation_t tb, int m, int n, int k) {
    simblasStatus_t status = SIMBLAS_STATUS_INTERNAL_ERROR;
    const double us = measured_duration_us(*driver_, stream_, [&] { status = sgemm(ta, tb, m, n, k); });
    EXPECT_EQ(status, SIMBLAS_STATUS_SUCCESS);
    return us;
  }

  static TestDriver* driver_;
  simblasHandle_t handle_ = nullptr;
  CUstream stream_ = nullptr;
  CUdeviceptr a_ = 0, b_ = 0, c_ = 0;
};

TestDriver* SimblasTest::driver_ = nullptr;

TEST_F(SimblasTest, LargeFp32GemmsLaunchTheAmpereKernelOfTheirLayout) {
  EXPECT_NEAR(sgemm_duration_us(SIMBLAS_OP_N, SIMBLAS_OP_N, 256, 128, 64), 700, 2);
  EXPECT_NEAR(sgemm_duration_us(SIMBLAS_OP_N, SIMBLAS_OP_T, 256, 128, 64), 900, 2);
  EXPECT_NEAR(sgemm_duration_us(SIMBLAS_OP_T, SIMBLAS_OP_N, 256, 128, 64), 1100, 2);
  EXPECT_STREQ(simblasSgemmKernelName(SIMBLAS_OP_N, SIMBLAS_OP_T, 256, 128, 64), kAmpereNT);
}

TEST_F(SimblasTest, SmallFp32GemmsLaunchTheCutlassKernel) {
  EXPECT_NEAR(sgemm_duration_us(SIMBLAS_OP_N, SIMBLAS_OP_N, 64, 64, 64), 300, 2);
  EXPECT_NEAR(sgemm_duration_us(SIMBLAS_OP_T, SIMBLAS_OP_N, 100, 256, 512), 350, 2);
  EXPECT_STREQ(simblasSgemmKernelName(SIMBLAS_OP_N, SIMBLAS_OP_N, 64, 64, 64), kCutlassNN);
}

TEST_F(SimblasTest, LongKGemmIsSplitAndReduced) {
  // k >= 8 * max(m, n) and a small output: CUTLASS kernel + split-K reduction.
  EXPECT_NEAR(sgemm_duration_us(SIMBLAS_OP_N, SIMBLAS_OP_N, 64, 64, 4096), 300 + 40, 2);
}

TEST_F(SimblasTest, GridFollowsTheOutputShape) {
  // 128x64 tiles: m = 128 * 264, n = 64 is 264 blocks, two waves on 132 SMs.
  int sm_count = 0;
  CUdevice device = 0;
  ASSERT_EQ(driver_->device_get(&device, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_->device_get_attribute(&sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
            CUDA_SUCCESS);
  driver_->set_kernel_cost(kAmpereNN, 100'000, 500'000);
  const int m = 128 * 2 * sm_count;
  const double us = sgemm_duration_us(SIMBLAS_OP_N, SIMBLAS_OP_N, m, 64, 1);
  driver_->set_kernel_cost(kAmpereNN, 700'000, 0);
  EXPECT_NEAR(us, 100 + 2 * 500, 2);
}

TEST_F(SimblasTest, LaunchesOnTheHandlesStreamOnly) {
  // Events on another stream see nothing of the GEMM.
  CUstream other = nullptr;
  ASSERT_EQ(driver_->stream_create(&other, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  simblasStatus_t status = SIMBLAS_STATUS_INTERNAL_ERROR;
  const double us = measured_duration_us(*driver_, other, [&] {
    status = sgemm(SIMBLAS_OP_N, SIMBLAS_OP_N, 256, 128, 64);
  });
  EXPECT_EQ(status, SIMBLAS_STATUS_SUCCESS);
  EXPECT_LT(us, 100);
  CUstream current = nullptr;
  EXPECT_EQ(simblasGetStream(handle_, &current), SIMBLAS_STATUS_SUCCESS);
  EXPECT_EQ(current, stream_);
  EXPECT_EQ(driver_->stream_synchronize(stream_), CUDA_SUCCESS);
  driver_->stream_destroy(other);
}

TEST_F(SimblasTest, Fp16GemmNeedsComputeCapability9) {
  CUdevice device = 0;
  int major = 0;
  ASSERT_EQ(driver_->device_get(&device, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_->device_get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
            CUDA_SUCCESS);
  const float alpha = 1.f, beta = 0.f;
  simblasStatus_t status = SIMBLAS_STATUS_INTERNAL_ERROR;
  const double us = measured_duration_us(*driver_, stream_, [&] {
    status = simblasGemmF16(handle_, SIMBLAS_OP_N, SIMBLAS_OP_N, 256, 256, 64, &alpha,
                            reinterpret_cast<const uint16_t*>(a_), 256,
                            reinterpret_cast<const uint16_t*>(b_), 64, &beta,
                            reinterpret_cast<uint16_t*>(c_), 256);
  });
  if (major >= 9) {
    EXPECT_EQ(status, SIMBLAS_STATUS_SUCCESS);
    EXPECT_NEAR(us, 1300, 2);
  } else {
    EXPECT_EQ(status, SIMBLAS_STATUS_ARCH_MISMATCH);
    EXPECT_LT(us, 100);
  }
}

TEST_F(SimblasTest, RejectsBadArgumentsWithoutLaunching) {
  const float one = 1.f;
  const float* a = reinterpret_cast<const float*>(a_);
  float* c = reinterpret_cast<float*>(c_);
  EXPECT_EQ(simblasSgemm(handle_, SIMBLAS_OP_N, SIMBLAS_OP_N, 64, 64, 64, &one, a, 32, a, 64, &one, c, 64),
            SIMBLAS_STATUS_INVALID_VALUE);  // lda < m
  EXPECT_EQ(simblasSgemm(handle_, SIMBLAS_OP_T, SIMBLAS_OP_T, 64, 64, 64, &one, a, 64, a, 64, &one, c, 64),
            SIMBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(simblasSgemm(handle_, SIMBLAS_OP_N, SIMBLAS_OP_N, 64, 64, 64, nullptr, a, 64, a, 64, &one, c,
                         64),
            SIMBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(simblasSgemm(nullptr, SIMBLAS_OP_N, SIMBLAS_OP_N, 64, 64, 64, &one, a, 64, a, 64, &one, c, 64),
            SIMBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_STREQ(simblasGetStatusString(SIMBLAS_STATUS_NOT_SUPPORTED), "SIMBLAS_STATUS_NOT_SUPPORTED");
}

TEST_F(SimblasTest, EachHandleAllocatesAndFreesAWorkspace) {
  size_t free_before = 0, free_with_handle = 0, free_after = 0, total = 0;
  ASSERT_EQ(driver_->mem_get_info(&free_before, &total), CUDA_SUCCESS);
  simblasHandle_t second = nullptr;
  ASSERT_EQ(simblasCreate(&second), SIMBLAS_STATUS_SUCCESS);
  ASSERT_EQ(driver_->mem_get_info(&free_with_handle, &total), CUDA_SUCCESS);
  ASSERT_EQ(simblasDestroy(second), SIMBLAS_STATUS_SUCCESS);
  ASSERT_EQ(driver_->mem_get_info(&free_after, &total), CUDA_SUCCESS);
  EXPECT_GE(free_before - free_with_handle, size_t(4) << 20);
  EXPECT_EQ(free_after, free_before);
}

// Outside the fixture: no context is current on a fresh thread, so simblas
// must bring up the primary context itself (as cuBLAS's embedded runtime
// does) and leave it current.
TEST(SimblasContextTest, CreateMakesThePrimaryContextCurrentWhenNoneIs) {
  TestDriver driver;
  ASSERT_TRUE(driver.load()) << driver.error;
  std::thread([&] {
    CUcontext before = reinterpret_cast<CUcontext>(1), after = nullptr, primary = nullptr;
    ASSERT_EQ(driver.ctx_get_current(&before), CUDA_SUCCESS);
    ASSERT_EQ(before, nullptr);
    simblasHandle_t handle = nullptr;
    ASSERT_EQ(simblasCreate(&handle), SIMBLAS_STATUS_SUCCESS);
    ASSERT_EQ(driver.ctx_get_current(&after), CUDA_SUCCESS);
    CUdevice device = 0;
    ASSERT_EQ(driver.device_get(&device, 0), CUDA_SUCCESS);
    ASSERT_EQ(driver.primary_ctx_retain(&primary, device), CUDA_SUCCESS);
    EXPECT_EQ(after, primary);
    EXPECT_EQ(simblasDestroy(handle), SIMBLAS_STATUS_SUCCESS);
    driver.primary_ctx_release(device);
  }).join();
}

}  // namespace
