// Processes: a forked child of a parent that never touched CUDA can use the
// GPU; a process may exit with work still queued; a child forked after the
// parent initialized the driver gets an initialization error, not a hang.
// The tests run in declaration order: the parent initializes only in the last.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "timing_kernels.h"

namespace {

// Runs `body` in a forked child and returns its exit status (or -1 if it did
// not exit within `timeout_ms`, after killing it).
template <class Body>
int run_in_child(Body body, int timeout_ms) {
  pid_t child = fork();
  if (child == 0) {
    int code = body();
    std::exit(code);  // a normal exit: static destructors, atexit handlers
  }
  const int64_t deadline_ns = host_now_ns() + int64_t(timeout_ms) * 1'000'000;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (host_now_ns() > deadline_ns) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return -1;
    }
    usleep(1000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int use_the_gpu() {
  if (cuInit(0) != CUDA_SUCCESS) return 10;
  CUcontext context = nullptr;
  if (cuDevicePrimaryCtxRetain(&context, 0) != CUDA_SUCCESS || cuCtxSetCurrent(context) != CUDA_SUCCESS) return 11;
  std::vector<int> data(1024, 7), back(1024, 0);
  CUdeviceptr device = 0;
  if (cuMemAlloc(&device, 4096) != CUDA_SUCCESS) return 12;
  if (cuMemcpyHtoD(device, data.data(), 4096) != CUDA_SUCCESS) return 13;
  CUmodule module = nullptr;
  CUfunction kernel = nullptr;
  if (cuModuleLoadData(&module, kTimingPtx) != CUDA_SUCCESS) return 14;
  if (cuModuleGetFunction(&kernel, module, "short_kernel") != CUDA_SUCCESS) return 15;
  if (cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr) != CUDA_SUCCESS) return 16;
  if (cuMemcpyDtoH(back.data(), device, 4096) != CUDA_SUCCESS) return 17;
  return data == back ? 0 : 18;
}

TEST(Process, ChildOfAnUninitializedParentUsesTheGpu) {
  EXPECT_EQ(0, run_in_child(use_the_gpu, 10'000));
  EXPECT_EQ(0, run_in_child(use_the_gpu, 10'000)) << "and so does a second child";
}

TEST(Process, ExitWithWorkStillQueuedDoesNotWaitForIt) {
  int code = run_in_child(
      [] {
        if (use_the_gpu() != 0) return 20;
        simgpuSetKernelCost("long_kernel", 30'000'000'000ull, 0);  // 30 s
        CUmodule module = nullptr;
        CUfunction kernel = nullptr;
        CUstream stream = nullptr;
        cuModuleLoadData(&module, kTimingPtx);
        cuModuleGetFunction(&kernel, module, "long_kernel");
        cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
        if (cuLaunchKernel(kernel, 1, 1, 1, 32, 1, 1, 0, stream, nullptr, nullptr) != CUDA_SUCCESS) return 21;
        return cuStreamQuery(stream) == CUDA_ERROR_NOT_READY ? 0 : 22;
      },
      5'000);
  EXPECT_EQ(0, code) << "-1: the child hung at exit";
}

TEST(Process, ChildOfAnInitializedParentGetsAnInitializationError) {
  ASSERT_CU_OK(cuInit(0));
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuDevicePrimaryCtxRetain(&context, 0));
  int code = run_in_child(
      [] {
        int count = 0;
        if (cuInit(0) != CUDA_ERROR_NOT_INITIALIZED) return 30;
        if (cuDeviceGetCount(&count) != CUDA_ERROR_NOT_INITIALIZED) return 31;
        return 0;
      },
      5'000);
  EXPECT_EQ(0, code);
  // The parent is unaffected.
  int count = 0;
  EXPECT_CU_OK(cuDeviceGetCount(&count));
  ASSERT_CU_OK(cuDevicePrimaryCtxRelease(0));
}

}  // namespace
