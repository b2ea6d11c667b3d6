// A small nvcc program for the end-to-end tests: everything on the default
// stream, so that the same source shows the legacy default stream (built
// plainly) and the per-thread default stream (built with --default-stream
// per-thread, which makes nvcc's stubs call __cudaLaunchKernel_ptsz and the
// headers map the API to its _ptds/_ptsz entry points).
//
// Per thread: 1 cudaMemcpy H2D, --launches <<<>>> launches of
// e2e_timed_kernel, 1 cudaMemsetAsync and 1 cudaMemcpyAsync D2H on stream 0,
// a stream synchronize, 1 cudaMemset and 1 cudaMemcpy D2H. With --threads
// above 1 the threads do this at the same time: on one legacy default
// stream, or each on its own per-thread default stream. The kernel's
// modelled duration comes from SIMGPU_KERNEL_COSTS (its mangled name is
// _Z16e2e_timed_kernelPfi), so the tests choose it.
//
// usage: stream_ops [--launches N=4] [--threads T=1]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

__global__ void e2e_timed_kernel(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

namespace {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "error: %s failed: %s\n", what, cudaGetErrorName(status));
  std::exit(1);
}

bool run_stream_ops(int launches) {
  constexpr int kElements = 1 << 16;
  constexpr size_t kBytes = kElements * sizeof(float);
  std::vector<float> host(kElements, 1.0f), back(kElements);
  float* device = nullptr;
  check(cudaMalloc(&device, kBytes), "cudaMalloc");
  check(cudaMemcpy(device, host.data(), kBytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  for (int i = 0; i < launches; ++i) {
    e2e_timed_kernel<<<kElements / 256, 256>>>(device, kElements);
    check(cudaGetLastError(), "launch");
  }
  check(cudaMemsetAsync(device, 0, kBytes, 0), "cudaMemsetAsync");
  check(cudaMemcpyAsync(back.data(), device, kBytes, cudaMemcpyDeviceToHost, 0), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  check(cudaMemset(device, 0, kBytes), "cudaMemset");
  check(cudaMemcpy(back.data(), device, kBytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  check(cudaFree(device), "cudaFree");
  for (float value : back)
    if (value != 0.0f) return false;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int launches = 4;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0 && i + 1 < argc) {
      launches = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: stream_ops [--launches N] [--threads T]\n");
      return 2;
    }
  }
  check(cudaFree(nullptr), "cudaFree(0) context creation");
  std::vector<char> ok(threads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back([&, t] { ok[t] = run_stream_ops(launches); });
  for (std::thread& worker : workers) worker.join();
  for (char thread_ok : ok) {
    if (!thread_ok) {
      std::fprintf(stderr, "error: the memset did not reach the host copy\n");
      return 1;
    }
  }
  std::printf("stream_ops: threads=%d launches=%d copies=%d memsets=%d ok\n", threads,
              threads * launches, threads * 3, threads * 2);
  return 0;
}
