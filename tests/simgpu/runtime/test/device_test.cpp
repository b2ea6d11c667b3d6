// Devices as the runtime reports them. The meson test configures the
// simulated machine through SIMGPU_* variables (two devices named
// "Runtime Test GPU", compute capability 8.6, 7 SMs, 1 GiB each); every
// expectation here comes from that configuration, not from the runtime.
#include <cuda.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

namespace {

constexpr int kConfiguredDevices = 2;
constexpr size_t kConfiguredMemoryBytes = size_t{1024} << 20;

template <typename Function>
Function driver_function(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  EXPECT_EQ(
      cudaGetDriverEntryPointByVersion(name, &function, CUDART_VERSION, cudaEnableDefault, &status),
      cudaSuccess)
      << name;
  EXPECT_EQ(status, cudaDriverEntryPointSuccess) << name;
  return reinterpret_cast<Function>(function);
}

TEST(RuntimeDevices, CountMatchesTheSimulatedMachine) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, kConfiguredDevices);
}

TEST(RuntimeDevices, PropertiesComeFromTheDriver) {
  for (int device = 0; device < kConfiguredDevices; ++device) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
    EXPECT_STREQ(prop.name, "Runtime Test GPU");
    EXPECT_EQ(prop.major, 8);
    EXPECT_EQ(prop.minor, 6);
    EXPECT_EQ(prop.multiProcessorCount, 7);
    EXPECT_EQ(prop.totalGlobalMem, kConfiguredMemoryBytes);
    EXPECT_EQ(prop.warpSize, 32);
    EXPECT_GT(prop.maxThreadsPerBlock, 0);
    EXPECT_EQ(prop.unifiedAddressing, 1);
    int attribute = 0;
    ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrMultiProcessorCount, device),
              cudaSuccess);
    EXPECT_EQ(attribute, 7);
    ASSERT_EQ(cudaDeviceGetAttribute(&attribute, cudaDevAttrComputeCapabilityMajor, device),
              cudaSuccess);
    EXPECT_EQ(attribute, 8);
  }
}

TEST(RuntimeDevices, InvalidOrdinalsAreRejected) {
  cudaDeviceProp prop{};
  EXPECT_EQ(cudaGetDeviceProperties(&prop, kConfiguredDevices), cudaErrorInvalidDevice);
  int value = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, -1), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(kConfiguredDevices), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
}

TEST(RuntimeDevices, SelectedDeviceIsPerThreadAndDefaultsToZero) {
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  int device = -1;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  EXPECT_EQ(device, 1);
  int other_thread_device = -1;
  int other_thread_allocation_device = -1;
  std::thread([&] {
    cudaGetDevice(&other_thread_device);
    void* pointer = nullptr;
    if (cudaMalloc(&pointer, 64) != cudaSuccess) return;
    cudaPointerAttributes attributes{};
    cudaPointerGetAttributes(&attributes, pointer);
    other_thread_allocation_device = attributes.device;
    cudaFree(pointer);
  }).join();
  EXPECT_EQ(other_thread_device, 0);
  EXPECT_EQ(other_thread_allocation_device, 0);
  void* pointer = nullptr;
  ASSERT_EQ(cudaMalloc(&pointer, 64), cudaSuccess);
  cudaPointerAttributes attributes{};
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pointer), cudaSuccess);
  EXPECT_EQ(attributes.device, 1);
  EXPECT_EQ(cudaFree(pointer), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

TEST(RuntimeDevices, PrimaryContextIsMadeCurrentLazilyPerThread) {
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  using PrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);
  auto ctx_get_current = driver_function<CtxGetCurrent>("cuCtxGetCurrent");
  auto primary_ctx_retain = driver_function<PrimaryCtxRetain>("cuDevicePrimaryCtxRetain");
  ASSERT_NE(ctx_get_current, nullptr);
  ASSERT_NE(primary_ctx_retain, nullptr);
  CUcontext before = reinterpret_cast<CUcontext>(1);
  CUcontext after = nullptr;
  CUcontext primary = nullptr;
  std::thread([&] {
    ctx_get_current(&before);
    void* pointer = nullptr;
    if (cudaMalloc(&pointer, 64) == cudaSuccess) cudaFree(pointer);
    ctx_get_current(&after);
    primary_ctx_retain(&primary, 0);
  }).join();
  EXPECT_EQ(before, nullptr);
  EXPECT_NE(after, nullptr);
  EXPECT_EQ(after, primary);
}

TEST(RuntimeDevices, AContextMadeCurrentThroughTheDriverIsUsed) {
  using CtxSetCurrent = CUresult (*)(CUcontext);
  using PrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);
  auto ctx_set_current = driver_function<CtxSetCurrent>("cuCtxSetCurrent");
  auto primary_ctx_retain = driver_function<PrimaryCtxRetain>("cuDevicePrimaryCtxRetain");
  int device_seen = -1;
  int allocation_device = -1;
  std::thread([&] {
    CUcontext device_one = nullptr;
    if (primary_ctx_retain(&device_one, 1) != CUDA_SUCCESS) return;
    ctx_set_current(device_one);
    cudaGetDevice(&device_seen);
    void* pointer = nullptr;
    if (cudaMalloc(&pointer, 64) != cudaSuccess) return;
    cudaPointerAttributes attributes{};
    cudaPointerGetAttributes(&attributes, pointer);
    allocation_device = attributes.device;
    cudaFree(pointer);
  }).join();
  EXPECT_EQ(device_seen, 1);
  EXPECT_EQ(allocation_device, 1);
}

TEST(RuntimeDevices, ResetReleasesTheDevicesMemoryAndTheDeviceStaysUsable) {
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  size_t free_before = 0;
  size_t total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  void* leaked = nullptr;
  ASSERT_EQ(cudaMalloc(&leaked, 32 << 20), cudaSuccess);
  ASSERT_EQ(cudaDeviceReset(), cudaSuccess);
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_before);
  void* fresh = nullptr;
  ASSERT_EQ(cudaMalloc(&fresh, 4096), cudaSuccess);
  EXPECT_EQ(cudaMemset(fresh, 1, 4096), cudaSuccess);
  EXPECT_EQ(cudaFree(fresh), cudaSuccess);
}

TEST(RuntimeDevices, VersionsAreTheRuntimesAndTheDriversOwn) {
  int runtime_version = 0;
  ASSERT_EQ(cudaRuntimeGetVersion(&runtime_version), cudaSuccess);
  EXPECT_EQ(runtime_version, CUDART_VERSION);
  int driver_version = 0;
  ASSERT_EQ(cudaDriverGetVersion(&driver_version), cudaSuccess);
  using DriverGetVersion = CUresult (*)(int*);
  int reported_by_driver = -1;
  ASSERT_EQ(driver_function<DriverGetVersion>("cuDriverGetVersion")(&reported_by_driver),
            CUDA_SUCCESS);
  EXPECT_EQ(driver_version, reported_by_driver);
  EXPECT_GE(driver_version, 13000);
}

TEST(RuntimeDevices, ProfilerStartAndStopReachTheDriver) {
  EXPECT_EQ(cudaProfilerStart(), cudaSuccess);
  EXPECT_EQ(cudaProfilerStop(), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(RuntimeDevices, DriverEntryPointsAreTheDriversFunctions) {
  using MemAlloc = CUresult (*)(CUdeviceptr*, size_t);
  using MemFree = CUresult (*)(CUdeviceptr);
  auto mem_alloc = driver_function<MemAlloc>("cuMemAlloc");
  auto mem_free = driver_function<MemFree>("cuMemFree");
  ASSERT_NE(mem_alloc, nullptr);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the context the driver call needs
  CUdeviceptr address = 0;
  ASSERT_EQ(mem_alloc(&address, 4096), CUDA_SUCCESS);
  // Memory from the driver is memory the runtime can use.
  const char message[] = "through the driver";
  char back[sizeof(message)] = {};
  void* pointer = reinterpret_cast<void*>(address);
  ASSERT_EQ(cudaMemcpy(pointer, message, sizeof(message), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(back, pointer, sizeof(back), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_STREQ(back, message);
  EXPECT_EQ(mem_free(address), CUDA_SUCCESS);

  void* missing = reinterpret_cast<void*>(1);
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
  // Deprecated in favour of ...ByVersion, but still what older code calls.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  // Documented: an unknown symbol is not an error; the status says so.
  EXPECT_EQ(cudaGetDriverEntryPoint("cuNoSuchFunction", &missing, cudaEnableDefault, &status),
            cudaSuccess);
#pragma GCC diagnostic pop
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(missing, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
