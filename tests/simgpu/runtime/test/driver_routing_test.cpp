// How the runtime reaches the driver. This binary runs with the proxy
// libcuda.so.1 (test/proxy) first on LD_LIBRARY_PATH: the proxy exports only
// cuGetProcAddress_v2, forwards to the simulated driver, and records which
// exported driver symbol each wrapped call reached.
//
// Tests run in definition order (gtest's default); the first one must see a
// process in which nothing has touched CUDA yet.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
cudaError_t cudaMemcpy_ptds(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t cudaMemcpyAsync_ptsz(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemset_ptds(void*, int, size_t);
cudaError_t cudaMemsetAsync_ptsz(void*, int, size_t, cudaStream_t);
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t);
cudaError_t cudaEventRecord_ptsz(cudaEvent_t, cudaStream_t);
}

namespace {

struct Proxy {
  size_t (*request_count)(const char*, unsigned long long) = nullptr;
  int (*requested_version)(const char*, unsigned long long) = nullptr;
  size_t (*calls_to)(const char*) = nullptr;
};

Proxy loaded_proxy() {
  Proxy proxy;
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return proxy;
  proxy.request_count =
      reinterpret_cast<decltype(proxy.request_count)>(dlsym(handle, "simgpu_proxy_request_count"));
  proxy.requested_version = reinterpret_cast<decltype(proxy.requested_version)>(
      dlsym(handle, "simgpu_proxy_requested_version"));
  proxy.calls_to =
      reinterpret_cast<decltype(proxy.calls_to)>(dlsym(handle, "simgpu_proxy_calls_to"));
  return proxy;
}

bool driver_is_loaded() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

TEST(DriverRouting, DriverIsLoadedOnlyWhenTheFirstCallNeedsIt) {
  ASSERT_FALSE(driver_is_loaded()) << "something loaded libcuda.so.1 before the test";
  // Calls that need no driver.
  int version = 0;
  EXPECT_EQ(cudaRuntimeGetVersion(&version), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_STREQ(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
  EXPECT_FALSE(driver_is_loaded());
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_TRUE(driver_is_loaded());
  Proxy proxy = loaded_proxy();
  ASSERT_NE(proxy.request_count, nullptr) << "the runtime did not load the proxy libcuda.so.1";
}

// Like the real runtime: each function once, at the version that introduced
// the ABI it calls, flags 0; stream-ordered ones again with the per-thread
// flag at the version of their _ptds/_ptsz variant.
TEST(DriverRouting, EachFunctionIsRequestedAtItsAbiVersionPerStreamMode) {
  constexpr unsigned long long kLegacy = 0;
  constexpr unsigned long long kPerThread = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  Proxy proxy = loaded_proxy();
  ASSERT_NE(proxy.request_count, nullptr);
  EXPECT_EQ(proxy.request_count("cuInit", kLegacy), 1u);
  EXPECT_EQ(proxy.requested_version("cuInit", kLegacy), 2000);
  EXPECT_EQ(proxy.requested_version("cuMemAlloc", kLegacy), 3020);
  EXPECT_EQ(proxy.requested_version("cuMemcpyHtoDAsync", kLegacy), 3020);
  EXPECT_EQ(proxy.requested_version("cuMemcpyHtoDAsync", kPerThread), 7000);
  EXPECT_EQ(proxy.requested_version("cuLaunchKernel", kLegacy), 4000);
  EXPECT_EQ(proxy.requested_version("cuLaunchKernel", kPerThread), 7000);
  EXPECT_EQ(proxy.requested_version("cuMemAllocAsync", kPerThread), 11020);
  // No per-thread variant exists, so none is asked for.
  EXPECT_EQ(proxy.request_count("cuMemAlloc", kPerThread), 0u);
  EXPECT_EQ(proxy.request_count("cuMemcpyHtoD", kLegacy), 1u);
  EXPECT_EQ(proxy.request_count("cuMemcpyHtoD", kPerThread), 1u);
}

class DriverVariants : public ::testing::Test {
 protected:
  void SetUp() override {
    proxy_ = loaded_proxy();
    ASSERT_NE(proxy_.calls_to, nullptr);
    ASSERT_EQ(cudaMalloc(&device_, kBytes), cudaSuccess);
    host_.assign(kBytes, 0x42);
  }
  void TearDown() override { EXPECT_EQ(cudaFree(device_), cudaSuccess); }

  // How many calls `action` added to the driver symbol `symbol`.
  template <typename Action>
  size_t calls_added(const char* symbol, Action&& action) {
    size_t before = proxy_.calls_to(symbol);
    action();
    return proxy_.calls_to(symbol) - before;
  }

  static constexpr size_t kBytes = 4096;
  Proxy proxy_;
  void* device_ = nullptr;
  std::vector<uint8_t> host_;
};

TEST_F(DriverVariants, LegacyEntryPointsReachTheLegacyDriverFunctions) {
  auto copy = [&] {
    ASSERT_EQ(cudaMemcpy(device_, host_.data(), kBytes, cudaMemcpyHostToDevice), cudaSuccess);
  };
  EXPECT_EQ(calls_added("cuMemcpyHtoD_v2", copy), 1u);
  EXPECT_EQ(calls_added("cuMemcpyHtoD_v2_ptds", copy), 0u);
  EXPECT_EQ(calls_added("cuMemcpyHtoDAsync_v2",
                        [&] {
                          ASSERT_EQ(cudaMemcpyAsync(device_, host_.data(), kBytes,
                                                    cudaMemcpyHostToDevice, nullptr),
                                    cudaSuccess);
                        }),
            1u);
  EXPECT_EQ(
      calls_added("cuMemsetD8_v2", [&] { ASSERT_EQ(cudaMemset(device_, 0, kBytes), cudaSuccess); }),
      1u);
  EXPECT_EQ(
      calls_added("cuMemsetD8Async",
                  [&] { ASSERT_EQ(cudaMemsetAsync(device_, 0, kBytes, nullptr), cudaSuccess); }),
      1u);
  EXPECT_EQ(calls_added("cuStreamSynchronize",
                        [&] { ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess); }),
            1u);
  EXPECT_EQ(calls_added("cuMemcpyDtoH_v2",
                        [&] {
                          ASSERT_EQ(cudaMemcpy(host_.data(), device_, kBytes, cudaMemcpyDefault),
                                    cudaSuccess);
                        }),
            1u);
}

TEST_F(DriverVariants, PerThreadEntryPointsReachThePtdsAndPtszDriverFunctions) {
  EXPECT_EQ(calls_added("cuMemcpyHtoD_v2_ptds",
                        [&] {
                          ASSERT_EQ(cudaMemcpy_ptds(device_, host_.data(), kBytes,
                                                    cudaMemcpyHostToDevice),
                                    cudaSuccess);
                        }),
            1u);
  EXPECT_EQ(calls_added("cuMemcpyHtoDAsync_v2_ptsz",
                        [&] {
                          ASSERT_EQ(cudaMemcpyAsync_ptsz(device_, host_.data(), kBytes,
                                                         cudaMemcpyHostToDevice, nullptr),
                                    cudaSuccess);
                        }),
            1u);
  EXPECT_EQ(calls_added("cuMemsetD8_v2_ptds",
                        [&] { ASSERT_EQ(cudaMemset_ptds(device_, 1, kBytes), cudaSuccess); }),
            1u);
  EXPECT_EQ(calls_added(
                "cuMemsetD8Async_ptsz",
                [&] { ASSERT_EQ(cudaMemsetAsync_ptsz(device_, 1, kBytes, nullptr), cudaSuccess); }),
            1u);
  cudaEvent_t event = nullptr;
  ASSERT_EQ(cudaEventCreate(&event), cudaSuccess);
  EXPECT_EQ(calls_added("cuEventRecord_ptsz",
                        [&] { ASSERT_EQ(cudaEventRecord_ptsz(event, nullptr), cudaSuccess); }),
            1u);
  EXPECT_EQ(calls_added("cuStreamSynchronize_ptsz",
                        [&] { ASSERT_EQ(cudaStreamSynchronize_ptsz(nullptr), cudaSuccess); }),
            1u);
  EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
}

TEST_F(DriverVariants, DriverEntryPointsHandOutTheVariantTheFlagAsksFor) {
  using CopyAsync = CUresult (*)(CUdeviceptr, const void*, size_t, CUstream);
  void* legacy = nullptr;
  void* per_thread = nullptr;
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuMemcpyHtoDAsync", &legacy, 13000,
                                             cudaEnableLegacyStream, nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuMemcpyHtoDAsync", &per_thread, 13000,
                                             cudaEnablePerThreadDefaultStream, nullptr),
            cudaSuccess);
  ASSERT_NE(legacy, nullptr);
  ASSERT_NE(per_thread, nullptr);
  auto address = reinterpret_cast<CUdeviceptr>(device_);
  EXPECT_EQ(calls_added("cuMemcpyHtoDAsync_v2",
                        [&] {
                          ASSERT_EQ(reinterpret_cast<CopyAsync>(legacy)(address, host_.data(),
                                                                        kBytes, nullptr),
                                    CUDA_SUCCESS);
                        }),
            1u);
  EXPECT_EQ(calls_added("cuMemcpyHtoDAsync_v2_ptsz",
                        [&] {
                          ASSERT_EQ(reinterpret_cast<CopyAsync>(per_thread)(address, host_.data(),
                                                                            kBytes, nullptr),
                                    CUDA_SUCCESS);
                        }),
            1u);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
