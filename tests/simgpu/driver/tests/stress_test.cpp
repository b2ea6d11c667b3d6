// Many threads use the driver at once, as a training program with data
// loaders and NCCL-like helper threads does. The data must come out right and
// nothing may deadlock. (Also the workload for ThreadSanitizer runs, see README.)
#include <cudaTypedefs.h>

#include <atomic>
#include <thread>
#include <vector>

#include "timing_kernels.h"

namespace {

using StressTest = TimingTest;

constexpr int kThreads = 6;
constexpr int kIterations = 150;
constexpr size_t kBytes = 16 * 1024;

TEST_F(StressTest, ConcurrentStreamsCopiesKernelsEventsAndAllocations) {
  ASSERT_EQ(0, simgpuSetKernelCost("short_kernel", 20'000, 0));
  void* launch_ptsz = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_CU_OK(
      cuGetProcAddress("cuLaunchKernel", &launch_ptsz, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status));
  auto launch_per_thread = reinterpret_cast<PFN_cuLaunchKernel_v7000_ptsz>(launch_ptsz);
  std::atomic<int> failures{0};
  std::atomic<bool> stop_observer{false};

  auto worker = [&](int index) {
    auto check = [&](CUresult result) {
      if (result != CUDA_SUCCESS) failures++;
    };
    check(cuCtxSetCurrent(context_));
    CUstream mine = nullptr, helper = nullptr;
    check(cuStreamCreate(&mine, index % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
    check(cuStreamCreate(&helper, CU_STREAM_NON_BLOCKING));
    void* pinned = nullptr;
    check(cuMemAllocHost(&pinned, kBytes));
    auto* bytes = static_cast<uint8_t*>(pinned);
    for (int iteration = 0; iteration < kIterations; ++iteration) {
      const uint8_t value = uint8_t(index * 31 + iteration);
      CUdeviceptr device = 0;
      CUresult allocated = iteration % 3 ? cuMemAlloc(&device, kBytes) : cuMemAllocAsync(&device, kBytes, mine);
      check(allocated);
      if (allocated != CUDA_SUCCESS) continue;
      for (size_t i = 0; i < kBytes; ++i) bytes[i] = value;
      check(cuMemcpyHtoDAsync(device, pinned, kBytes, mine));
      check(cuLaunchKernel(short_kernel_, 1, 1, 1, 32, 1, 1, 0, mine, nullptr, nullptr));
      CUevent ready = nullptr;
      check(cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING));
      check(cuEventRecord(ready, mine));
      check(cuStreamWaitEvent(helper, ready, 0));
      check(cuMemsetD8Async(device + 7, uint8_t(value + 1), 1, helper));
      check(cuStreamWaitEvent(mine, ready, 0));
      check(launch_per_thread(short_kernel_, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
      check(cuStreamSynchronize(helper));
      check(cuMemcpyDtoHAsync(pinned, device, kBytes, mine));
      check(cuStreamSynchronize(mine));
      if (bytes[0] != value || bytes[7] != uint8_t(value + 1) || bytes[kBytes - 1] != value) failures++;
      check(cuEventDestroy(ready));
      check(iteration % 3 ? cuMemFree(device) : cuMemFreeAsync(device, mine));
      if (iteration % 50 == 49) {  // streams come and go too
        check(cuStreamDestroy(helper));
        check(cuStreamCreate(&helper, CU_STREAM_NON_BLOCKING));
      }
    }
    check(cuStreamSynchronize(mine));
    check(cuStreamDestroy(mine));
    check(cuStreamDestroy(helper));
    check(cuMemFreeHost(pinned));
  };

  std::thread observer([&] {
    cuCtxSetCurrent(context_);
    while (!stop_observer.load()) {
      size_t free = 0, total = 0;
      if (cuMemGetInfo(&free, &total) != CUDA_SUCCESS || free > total) failures++;
      cuCtxSynchronize();
    }
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) threads.emplace_back(worker, i);
  for (std::thread& thread : threads) thread.join();
  stop_observer = true;
  observer.join();
  EXPECT_EQ(0, failures.load());
}

}  // namespace
