// Every way a program can launch a kernel through the runtime: <<<>>>,
// cudaLaunchKernel with the host stub and with a cudaKernel_t,
// cudaLaunchKernelExC, cudaLaunchCooperativeKernel, and <<<>>> from several
// host threads at once. The test gives the kernel `slow_kernel` a modelled
// cost of 3 ms (SIMGPU_KERNEL_COSTS, keyed by mangled name) and every other
// kernel 10 us, so an event pair around a launch shows which kernel the
// driver actually ran: the runtime must have found it by its name.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t status_ = (call);                                                     \
    if (status_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorName(status_));                                        \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__global__ void slow_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * 2.0f + 1.0f;
}

__global__ void quick_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 0.0f;
}

namespace {

constexpr float kSlowKernelMs = 3.0f;

template <typename Launch>
float timed_ms(cudaStream_t stream, Launch&& launch) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  launch();
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float elapsed_ms = 0;
  CHECK(cudaEventElapsedTime(&elapsed_ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return elapsed_ms;
}

bool report(const char* how, float elapsed_ms, bool expect_slow) {
  bool looks_slow = elapsed_ms >= kSlowKernelMs * 0.9f;
  bool ok = looks_slow == expect_slow;
  std::printf("%s: %s (%.3f ms)\n", how, ok ? "ran the expected kernel" : "WRONG KERNEL", elapsed_ms);
  return ok;
}

}  // namespace

int main() {
  const int n = 4096;
  float* data = nullptr;
  CHECK(cudaMalloc(&data, n * sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  dim3 grid(n / 256), block(256);
  void* args[] = {&data, const_cast<int*>(&n)};
  bool ok = true;

  ok &= report("triple chevron, slow_kernel",
               timed_ms(stream, [&] { slow_kernel<<<grid, block, 0, stream>>>(data, n); }), true);
  ok &= report("triple chevron, quick_kernel",
               timed_ms(stream, [&] { quick_kernel<<<grid, block, 0, stream>>>(data, n); }), false);
  ok &= report("cudaLaunchKernel, host stub", timed_ms(stream, [&] {
                 CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(slow_kernel), grid, block,
                                        args, 0, stream));
               }),
               true);

  cudaKernel_t kernel = nullptr;
  CHECK(cudaGetKernel(&kernel, slow_kernel));
  ok &= report("cudaLaunchKernel, cudaKernel_t", timed_ms(stream, [&] {
                 CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, 0,
                                        stream));
               }),
               true);

  ok &= report("cudaLaunchKernelExC", timed_ms(stream, [&] {
                 cudaLaunchAttribute attribute;
                 attribute.id = cudaLaunchAttributePriority;
                 attribute.val.priority = 0;
                 cudaLaunchConfig_t config = {};
                 config.gridDim = grid;
                 config.blockDim = block;
                 config.dynamicSmemBytes = 0;
                 config.stream = stream;
                 config.attrs = &attribute;
                 config.numAttrs = 1;
                 CHECK(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(slow_kernel),
                                           args));
               }),
               true);

  ok &= report("cudaLaunchCooperativeKernel", timed_ms(stream, [&] {
                 CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(quick_kernel),
                                                   grid, block, args, 0, stream));
               }),
               false);

  // A launch the driver must refuse: more threads per block than any device has.
  slow_kernel<<<1, 4096, 0, stream>>>(data, n);
  cudaError_t bad_launch = cudaGetLastError();
  std::printf("oversized block: %s\n", cudaGetErrorName(bad_launch));
  ok &= bad_launch == cudaErrorInvalidConfiguration;

  // Dynamic shared memory above the default needs the opt-in attribute.
  CHECK(cudaFuncSetAttribute(slow_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
  cudaFuncAttributes attributes;
  CHECK(cudaFuncGetAttributes(&attributes, slow_kernel));
  std::printf("slow_kernel max dynamic shared memory: %d\n", attributes.maxDynamicSharedSizeBytes);
  ok &= attributes.maxDynamicSharedSizeBytes == 64 * 1024;

  // Launches from several threads, each on its own device's default stream.
  int device_count = 0;
  CHECK(cudaGetDeviceCount(&device_count));
  std::atomic<int> failed_threads{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      if (cudaSetDevice(t % device_count) != cudaSuccess) ++failed_threads;
      float* own = nullptr;
      if (cudaMalloc(&own, n * sizeof(float)) != cudaSuccess) ++failed_threads;
      for (int i = 0; i < 8; ++i) quick_kernel<<<grid, block>>>(own, n);
      if (cudaGetLastError() != cudaSuccess) ++failed_threads;
      if (cudaDeviceSynchronize() != cudaSuccess) ++failed_threads;
      if (cudaFree(own) != cudaSuccess) ++failed_threads;
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::printf("threads with a failed call: %d\n", failed_threads.load());
  ok &= failed_threads.load() == 0;

  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));

  // A reset destroys the context the kernels were loaded into; the next
  // launch must find them again in the new one.
  CHECK(cudaSetDevice(0));
  CHECK(cudaDeviceReset());
  CHECK(cudaMalloc(&data, n * sizeof(float)));
  ok &= report("triple chevron after cudaDeviceReset", timed_ms(nullptr, [&] {
                 slow_kernel<<<grid, block>>>(data, n);
               }),
               true);
  CHECK(cudaFree(data));
  if (!ok) return 1;
  std::printf("OK\n");
  return 0;
}
