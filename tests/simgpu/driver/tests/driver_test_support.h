// Shared helpers for the simulated driver's tests. Tests use the public driver
// API only (the library under test is the build tree's libcuda.so.1).
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <ctime>
#include <string>

inline std::string cu_error_name(CUresult result) {
  const char* name = nullptr;
  return cuGetErrorName(result, &name) == CUDA_SUCCESS ? name : "CUresult " + std::to_string(int(result));
}

#define ASSERT_CU(expected, expression) ASSERT_EQ(cu_error_name(expected), cu_error_name(expression))
#define EXPECT_CU(expected, expression) EXPECT_EQ(cu_error_name(expected), cu_error_name(expression))
#define ASSERT_CU_OK(expression) ASSERT_CU(CUDA_SUCCESS, expression)
#define EXPECT_CU_OK(expression) EXPECT_CU(CUDA_SUCCESS, expression)

inline int64_t host_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Initializes the driver and makes device `ordinal`'s primary context current.
class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_CU_OK(cuInit(0));
    ASSERT_CU_OK(cuDeviceGet(&device_, 0));
    ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&context_, device_));
    ASSERT_CU_OK(cuCtxSetCurrent(context_));
  }
  void TearDown() override {
    cuCtxSynchronize();
    cuDevicePrimaryCtxRelease(device_);
  }

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// Milliseconds between two completed events.
inline float elapsed_ms(CUevent start, CUevent end) {
  float ms = -1;
  EXPECT_EQ(CUDA_SUCCESS, cuEventElapsedTime(&ms, start, end));
  return ms;
}
