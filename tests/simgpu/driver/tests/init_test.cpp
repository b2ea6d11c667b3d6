// Before cuInit every call that needs the driver answers NOT_INITIALIZED; the
// calls documented to work without it do; a bad configuration or no devices
// make cuInit fail. Each suite runs in its own process (see meson.build).
#include <cudaTypedefs.h>

#include "driver_test_support.h"

namespace {

TEST(BeforeInit, CallsNeedingTheDriverAreRefused) {
  int count = -1;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&count));
  CUcontext context = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuCtxGetCurrent(&context));
  CUdeviceptr device = 0;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuMemAlloc(&device, 16));
  CUstream stream = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuStreamCreate(&stream, 0));
  CUmodule module = nullptr;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuModuleLoadData(&module, "garbage"));
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr));

  // Documented to work without cuInit.
  int version = 0;
  EXPECT_CU_OK(cuDriverGetVersion(&version));
  EXPECT_EQ(13000, version);
  const char* text = nullptr;
  EXPECT_CU_OK(cuGetErrorString(CUDA_ERROR_NOT_INITIALIZED, &text));
  void* init = nullptr;
  CUdriverProcAddressQueryResult status{};
  EXPECT_CU_OK(cuGetProcAddress("cuInit", &init, 13000, 0, &status));
  EXPECT_NE(nullptr, init);

  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuInit(1)) << "flags must be 0";
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&count));

  ASSERT_CU_OK(reinterpret_cast<PFN_cuInit_v2000>(init)(0));
  ASSERT_CU_OK(cuInit(0)) << "initializing twice is fine";
  ASSERT_CU_OK(cuDeviceGetCount(&count));
  EXPECT_EQ(2, count) << "default: two devices";
  ASSERT_CU_OK(cuCtxGetCurrent(&context));
  EXPECT_EQ(nullptr, context) << "no context is current until one is made current";
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&device, 16));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuStreamCreate(&stream, 0));
}

// Run with SIMGPU_DEVICE_COUNT=0.
TEST(NoDevice, InitReportsNoDevice) {
  EXPECT_CU(CUDA_ERROR_NO_DEVICE, cuInit(0));
  int count = -1;
  EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&count));
}

// Run with a malformed SIMGPU_SM_COUNT.
TEST(BadConfiguration, InitFailsWithInvalidValue) {
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuInit(0));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuInit(0)) << "and keeps failing";
}

}  // namespace
