// The simulated devices follow SIMGPU_* (this test: 3 devices "Test GPU",
// 8 SMs, compute capability 8.6, 256 MiB) and contexts behave per thread.
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "driver_test_support.h"

namespace {

class DeviceContextTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_CU_OK(cuInit(0)); }
};

TEST_F(DeviceContextTest, DevicesFollowTheConfiguration) {
  int count = 0;
  ASSERT_CU_OK(cuDeviceGetCount(&count));
  ASSERT_EQ(3, count);
  std::set<std::string> uuids;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = -1;
    ASSERT_CU_OK(cuDeviceGet(&device, ordinal));
    char name[64] = {};
    ASSERT_CU_OK(cuDeviceGetName(name, sizeof(name), device));
    EXPECT_STREQ("Test GPU", name);
    int sms = 0, major = 0, minor = 0;
    ASSERT_CU_OK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device));
    ASSERT_CU_OK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device));
    ASSERT_CU_OK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
    EXPECT_EQ(8, sms);
    EXPECT_EQ(8, major);
    EXPECT_EQ(6, minor);
    size_t bytes = 0;
    ASSERT_CU_OK(cuDeviceTotalMem(&bytes, device));
    EXPECT_EQ(size_t(256) << 20, bytes);
    CUuuid uuid{};
    ASSERT_CU_OK(cuDeviceGetUuid(&uuid, device));
    uuids.insert(std::string(uuid.bytes, sizeof(uuid.bytes)));
    char bus_id[32] = {};
    ASSERT_CU_OK(cuDeviceGetPCIBusId(bus_id, sizeof(bus_id), device));
    CUdevice found = -1;
    ASSERT_CU_OK(cuDeviceGetByPCIBusId(&found, bus_id));
    EXPECT_EQ(device, found) << bus_id;
  }
  EXPECT_EQ(3u, uuids.size()) << "every device has its own UUID";
  CUdevice device = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&device, 3));
  int value = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 7));
  EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX, 0));
  ASSERT_CU_OK(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
  EXPECT_EQ(32, value);
}

TEST_F(DeviceContextTest, PrimaryContextIsRetainedAndReleased) {
  unsigned flags = 99;
  int active = 1;
  ASSERT_CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT_EQ(0, active);
  ASSERT_CU_OK(cuDevicePrimaryCtxSetFlags(1, CU_CTX_SCHED_BLOCKING_SYNC));
  CUcontext first = nullptr, second = nullptr;
  ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&first, 1));
  ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&second, 1));
  EXPECT_EQ(first, second);
  ASSERT_CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT_EQ(1, active);
  EXPECT_EQ(unsigned(CU_CTX_SCHED_BLOCKING_SYNC), flags);
  ASSERT_CU_OK(cuCtxSetCurrent(first));
  CUdevice device = -1;
  ASSERT_CU_OK(cuCtxGetDevice(&device));
  EXPECT_EQ(1, device);
  ASSERT_CU_OK(cuDevicePrimaryCtxRelease(1));
  ASSERT_CU_OK(cuDevicePrimaryCtxRelease(1));
  ASSERT_CU_OK(cuDevicePrimaryCtxGetState(1, &flags, &active));
  EXPECT_EQ(0, active);
  CUdeviceptr memory = 0;
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&memory, 16)) << "current, but released";
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(1));
  ASSERT_CU_OK(cuCtxSetCurrent(nullptr));
}

TEST_F(DeviceContextTest, CurrentContextsArePerThreadStacks) {
  CUcontext created = nullptr, other = nullptr;
  ASSERT_CU_OK(cuCtxCreate(&created, nullptr, 0, 0));
  CUcontext current = nullptr;
  ASSERT_CU_OK(cuCtxGetCurrent(&current));
  EXPECT_EQ(created, current) << "cuCtxCreate makes the new context current";
  ASSERT_CU_OK(cuCtxCreate(&other, nullptr, 0, 2));
  ASSERT_CU_OK(cuCtxPopCurrent(&current));
  EXPECT_EQ(other, current);
  ASSERT_CU_OK(cuCtxGetCurrent(&current));
  EXPECT_EQ(created, current);

  std::thread([&] {
    CUcontext seen = reinterpret_cast<CUcontext>(1);
    EXPECT_EQ(CUDA_SUCCESS, cuCtxGetCurrent(&seen));
    EXPECT_EQ(nullptr, seen) << "a new thread has no current context";
    EXPECT_EQ(CUDA_SUCCESS, cuCtxPushCurrent(other));
    CUdevice device = -1;
    EXPECT_EQ(CUDA_SUCCESS, cuCtxGetDevice(&device));
    EXPECT_EQ(2, device);
  }).join();

  unsigned long long id = 0, other_id = 0;
  ASSERT_CU_OK(cuCtxGetId(created, &id));
  ASSERT_CU_OK(cuCtxGetId(other, &other_id));
  EXPECT_NE(id, other_id);

  ASSERT_CU_OK(cuCtxDestroy(created));
  ASSERT_CU_OK(cuCtxGetCurrent(&current));
  EXPECT_EQ(nullptr, current) << "destroying the current context pops it";
  ASSERT_CU_OK(cuCtxPushCurrent(other));
  ASSERT_CU_OK(cuCtxDestroy(other));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxDestroy(other));
  EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxPushCurrent(other));
  EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(&current)) << "the stack is empty";
}

TEST_F(DeviceContextTest, ContextLimitsAndSettingsRoundTrip) {
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&context, 0));
  ASSERT_CU_OK(cuCtxSetCurrent(context));
  size_t heap = 0;
  ASSERT_CU_OK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 << 20));
  ASSERT_CU_OK(cuCtxGetLimit(&heap, CU_LIMIT_MALLOC_HEAP_SIZE));
  EXPECT_EQ(size_t(64) << 20, heap);
  ASSERT_CU_OK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
  CUfunc_cache cache{};
  ASSERT_CU_OK(cuCtxGetCacheConfig(&cache));
  EXPECT_EQ(CU_FUNC_CACHE_PREFER_SHARED, cache);
  ASSERT_CU_OK(cuDevicePrimaryCtxRelease(0));
}

}  // namespace
