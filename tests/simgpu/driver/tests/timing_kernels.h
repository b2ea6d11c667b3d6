// A PTX module written for the timing tests, so they run without nvcc: the
// simulator "JIT-compiles" PTX to its entry points like the real driver does.
// Each kernel gets a fixed modelled duration through simgpuSetKernelCost.
#pragma once

#include <simgpu.h>

#include "driver_test_support.h"

constexpr const char* kTimingPtx = R"(
.version 8.0
.target sm_90
.address_size 64

.visible .entry long_kernel()
{
  ret;
}

.visible .entry medium_kernel()
{
  ret;
}

.visible .entry short_kernel()
{
  ret;
}

.visible .entry cooperative_kernel(
  .param .u64 cooperative_kernel_param_0
)
{
  ret;
}
)";

constexpr unsigned long long kLongKernelNs = 100'000'000;
constexpr unsigned long long kMediumKernelNs = 20'000'000;
constexpr unsigned long long kShortKernelNs = 1'000'000;

class TimingTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    ASSERT_CU_OK(cuModuleLoadData(&module_, kTimingPtx));
    ASSERT_CU_OK(cuModuleGetFunction(&long_kernel_, module_, "long_kernel"));
    ASSERT_CU_OK(cuModuleGetFunction(&medium_kernel_, module_, "medium_kernel"));
    ASSERT_CU_OK(cuModuleGetFunction(&short_kernel_, module_, "short_kernel"));
    ASSERT_EQ(0, simgpuSetKernelCost("long_kernel", kLongKernelNs, 0));
    ASSERT_EQ(0, simgpuSetKernelCost("medium_kernel", kMediumKernelNs, 0));
    ASSERT_EQ(0, simgpuSetKernelCost("short_kernel", kShortKernelNs, 0));
  }

  // One block: a single wave, so the duration is the fixed cost.
  CUresult launch(CUfunction kernel, CUstream stream) {
    return cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr);
  }

  CUevent record(CUstream stream, unsigned flags = CU_EVENT_DEFAULT) {
    CUevent event = nullptr;
    EXPECT_EQ(CUDA_SUCCESS, cuEventCreate(&event, flags));
    EXPECT_EQ(CUDA_SUCCESS, cuEventRecord(event, stream));
    return event;
  }

  CUmodule module_ = nullptr;
  CUfunction long_kernel_ = nullptr, medium_kernel_ = nullptr, short_kernel_ = nullptr;
};
