// A load for AMD device metrics (launcher/gpu_metrics through ROCm SMI), the
// HIP twin of ../device_load.cpp: holds device memory and alternates busy
// and idle phases, so that a sampler outside the process sees the device
// busy and idle and the memory held.
//
//   device_load [--hold-mib M=256] [--busy-ms B=400] [--idle-ms I=400] [--cycles C=2]
//
// Busy phases launch kernels back to back on one stream (set their cost
// with SIMGPU_KERNEL_COSTS, e.g. *=10ms) until the phase is over. After
// allocating it prints "device_load: holding <bytes>" with what the runtime
// says this process holds (hipMemGetInfo's total - free), flushed.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    hipError_t error_ = (call);                                                                     \
    if (error_ != hipSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(error_)); \
      std::exit(2);                                                                                 \
    }                                                                                               \
  } while (0)

__global__ void spin(float* data) { data[threadIdx.x] += 1.0f; }

long option(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

int main(int argc, char** argv) {
  const long hold_mib = option(argc, argv, "--hold-mib", 256);
  const long busy_ms = option(argc, argv, "--busy-ms", 400);
  const long idle_ms = option(argc, argv, "--idle-ms", 400);
  const long cycles = option(argc, argv, "--cycles", 2);

  void* held = nullptr;
  CHECK(hipMalloc(&held, size_t(hold_mib) << 20));
  size_t free_bytes = 0, total_bytes = 0;
  CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
  std::printf("device_load: holding %zu\n", total_bytes - free_bytes);
  std::fflush(stdout);

  hipStream_t stream = nullptr;
  CHECK(hipStreamCreate(&stream));
  float* data = static_cast<float*>(held);
  for (long cycle = 0; cycle < cycles; ++cycle) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms);
    while (std::chrono::steady_clock::now() < end) {
      // Two kernels queued ahead: the stream never waits for the host.
      hipLaunchKernelGGL(spin, dim3(1), dim3(64), 0, stream, data);
      hipLaunchKernelGGL(spin, dim3(1), dim3(64), 0, stream, data);
      CHECK(hipGetLastError());
      CHECK(hipStreamSynchronize(stream));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
  }
  CHECK(hipStreamDestroy(stream));
  CHECK(hipFree(held));
  std::printf("device_load: done cycles=%ld\n", cycles);
  return 0;
}
