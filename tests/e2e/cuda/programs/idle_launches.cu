// Kernels launched the way small programs (NVIDIA's samples) launch them:
// one at a time on an idle stream, each waited for before the next. Without
// an activity API, such a kernel's start event completes before its launch
// call has even submitted it, so its measured time holds the launch call;
// this program is what the events backend's accuracy is measured on
// (gpu_timing_test.cpp, docs/limits.md).
//
// In order: the first launch of each of four kernels, --repeats more
// launches of each,
// then --threads threads each launching --repeats kernels on a stream of its
// own. Every launch is followed by a synchronize of its stream. The very
// first launch goes through cudaLaunchKernel with the kernel's host
// function, as code that does not use <<<>>> launches: the runtime loads the
// module lazily inside that call (with <<<>>>, CUDA 13's stubs load it in
// __cudaGetKernel before the launch), so its call is the slowest (how slow:
// SIMGPU_MODULE_LOAD_NS). Kernel
// durations come from SIMGPU_KERNEL_COSTS (names: _Z11idle_kernelILi0EEvPfi
// and its siblings 1, 2, 3).
//
// usage: idle_launches [--repeats N=3] [--threads T=2]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

template <int Which>
__global__ void idle_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += static_cast<float>(Which + 1);
}

namespace {

constexpr int kElements = 1 << 12;

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "idle_launches: %s failed: %s\n", what, cudaGetErrorName(status));
  std::exit(1);
}

void launch(int which, float* data, cudaStream_t stream) {
  const dim3 grid(kElements / 128), block(128);
  switch (which) {
    case 0: idle_kernel<0><<<grid, block, 0, stream>>>(data, kElements); break;
    case 1: idle_kernel<1><<<grid, block, 0, stream>>>(data, kElements); break;
    case 2: idle_kernel<2><<<grid, block, 0, stream>>>(data, kElements); break;
    default: idle_kernel<3><<<grid, block, 0, stream>>>(data, kElements); break;
  }
  check(cudaGetLastError(), "launch");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

int option(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = option(argc, argv, "--repeats", 3);
  const int threads = option(argc, argv, "--threads", 2);
  float* data = nullptr;
  check(cudaMalloc(&data, kElements * sizeof(float)), "cudaMalloc");
  check(cudaMemset(data, 0, kElements * sizeof(float)), "cudaMemset");
  {
    int elements = kElements;
    void* args[] = {&data, &elements};
    check(cudaLaunchKernel(reinterpret_cast<const void*>(&idle_kernel<0>), dim3(kElements / 128), dim3(128), args,
                           0, nullptr),
          "cudaLaunchKernel");
    check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
  }
  for (int which = 1; which < 4; ++which) launch(which, data, nullptr);
  for (int i = 0; i < repeats; ++i)
    for (int which = 0; which < 4; ++which) launch(which, data, nullptr);

  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([t, repeats] {
      cudaStream_t own = nullptr;
      float* mine = nullptr;
      check(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      check(cudaMalloc(&mine, kElements * sizeof(float)), "cudaMalloc");
      for (int i = 0; i < repeats; ++i) launch((t + i) % 4, mine, own);
      check(cudaFree(mine), "cudaFree");
      check(cudaStreamDestroy(own), "cudaStreamDestroy");
    });
  }
  for (std::thread& worker : workers) worker.join();
  check(cudaFree(data), "cudaFree");
  std::printf("idle_launches: ok\n");
  return 0;
}
