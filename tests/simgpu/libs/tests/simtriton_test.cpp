// libsimtriton on the simulated driver: kernels found by name in the cubin,
// launched with Triton's grid (one program per XBLOCK elements or per row)
// on the caller's stream, timed through their modelled durations.
#include <gtest/gtest.h>

#include "simtriton.h"
#include "test_driver.h"

namespace {

constexpr const char* kAddMul = "triton_poi_fused_add_mul_0";
constexpr const char* kSoftmax = "triton_red_fused__softmax_1";

// Runs on its own thread so that no context is current at the start.
TEST(SimtritonTest, InitMakesThePrimaryContextCurrentWhenNoneIs) {
  TestDriver driver;
  ASSERT_TRUE(driver.load()) << driver.error;
  std::thread([&] {
    CUcontext before = reinterpret_cast<CUcontext>(1), after = nullptr, primary = nullptr;
    ASSERT_EQ(driver.ctx_get_current(&before), CUDA_SUCCESS);
    ASSERT_EQ(before, nullptr);
    ASSERT_EQ(simtritonInit(), CUDA_SUCCESS) << simtritonLastError();
    ASSERT_EQ(driver.ctx_get_current(&after), CUDA_SUCCESS);
    CUdevice device = 0;
    ASSERT_EQ(driver.device_get(&device, 0), CUDA_SUCCESS);
    ASSERT_EQ(driver.primary_ctx_retain(&primary, device), CUDA_SUCCESS);
    EXPECT_EQ(after, primary);
    driver.primary_ctx_release(device);
  }).join();
}

class SimtritonLaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(driver_.load()) << driver_.error;
    CUdevice device = 0;
    CUcontext primary = nullptr;
    ASSERT_EQ(driver_.device_get(&device, 0), CUDA_SUCCESS);
    ASSERT_EQ(driver_.primary_ctx_retain(&primary, device), CUDA_SUCCESS);
    ASSERT_EQ(driver_.ctx_set_current(primary), CUDA_SUCCESS);
    ASSERT_EQ(driver_.device_get_attribute(&sm_count_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                           device),
              CUDA_SUCCESS);
    ASSERT_EQ(driver_.stream_create(&stream_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    for (CUdeviceptr* buffer : {&in0_, &in1_, &out_})
      ASSERT_EQ(driver_.mem_alloc(buffer, kBufferBytes), CUDA_SUCCESS);
    ASSERT_EQ(simtritonInit(), CUDA_SUCCESS) << simtritonLastError();
  }

  void TearDown() override {
    for (CUdeviceptr buffer : {in0_, in1_, out_}) driver_.mem_free(buffer);
    driver_.stream_destroy(stream_);
  }

  static constexpr size_t kBufferBytes = size_t(64) << 20;
  TestDriver driver_;
  int sm_count_ = 0;
  CUstream stream_ = nullptr;
  CUdeviceptr in0_ = 0, in1_ = 0, out_ = 0;
};

TEST_F(SimtritonLaunchTest, PointwiseKernelRunsOneProgramPer1024Elements) {
  // Exactly two waves of 1024-element programs, plus one element for a
  // partial third wave.
  const int elements = 1024 * 2 * sm_count_ + 1;
  ASSERT_LE(size_t(elements) * sizeof(float), kBufferBytes);
  ASSERT_EQ(driver_.set_kernel_cost(kAddMul, 50'000, 100'000), 0);
  ASSERT_EQ(driver_.set_kernel_cost(kSoftmax, 7'000'000, 0), 0);
  CUresult status = CUDA_ERROR_UNKNOWN;
  const double us = measured_duration_us(driver_, stream_, [&] {
    status = simtritonAddMul(stream_, in0_, in1_, out_, elements);
  });
  EXPECT_EQ(status, CUDA_SUCCESS) << simtritonLastError();
  EXPECT_NEAR(us, 50 + 3 * 100, 2);
}

TEST_F(SimtritonLaunchTest, SoftmaxRunsOneProgramPerRow) {
  ASSERT_EQ(driver_.set_kernel_cost(kAddMul, 7'000'000, 0), 0);
  ASSERT_EQ(driver_.set_kernel_cost(kSoftmax, 20'000, 200'000), 0);
  CUresult status = CUDA_ERROR_UNKNOWN;
  const int rows = sm_count_ + 1;  // two waves
  const double us = measured_duration_us(driver_, stream_, [&] {
    status = simtritonSoftmax(stream_, in0_, out_, rows, 512);
  });
  EXPECT_EQ(status, CUDA_SUCCESS) << simtritonLastError();
  EXPECT_NEAR(us, 20 + 2 * 200, 2);
}

TEST_F(SimtritonLaunchTest, RejectsEmptyShapesWithAReason) {
  EXPECT_EQ(simtritonAddMul(stream_, in0_, in1_, out_, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_STRNE(simtritonLastError(), "");
  EXPECT_EQ(simtritonSoftmax(stream_, in0_, out_, 4, 0), CUDA_ERROR_INVALID_VALUE);
}

}  // namespace
