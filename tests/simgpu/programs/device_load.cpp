// A load for device metrics (launcher/gpu_metrics): holds device memory and
// alternates busy and idle phases, so that a sampler outside the process
// sees utilization rise and fall and memory held.
//
//   device_load [--hold-mib M=256] [--busy-ms B=400] [--idle-ms I=400]
//               [--cycles C=2] [--copy-mib K=0] [--hold-seconds S=0]
//
// Busy phases launch 10 ms kernels (set SIMGPU_KERNEL_COSTS=*=10ms) back to
// back on one stream until the phase is over, and copy K MiB host to device
// and back once per phase. After allocating it prints
// "device_load: holding <bytes>" with what the driver says this process
// holds (cudaMemGetInfo's total - free), flushed. --hold-seconds: only hold
// the memory that long (after printing "device_load: ready"), then exit
// (the "other process" of a test).
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/options.h"

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--hold-mib", "--busy-ms", "--idle-ms", "--cycles", "--copy-mib", "--hold-seconds"});
  const long hold_mib = options.integer("--hold-mib", 256);
  const long busy_ms = options.integer("--busy-ms", 400);
  const long idle_ms = options.integer("--idle-ms", 400);
  const long cycles = options.integer("--cycles", 2);
  const long copy_mib = options.integer("--copy-mib", 0);
  const double hold_seconds = options.real("--hold-seconds", 0);

  void* held = nullptr;
  check_cuda(cudaMalloc(&held, size_t(hold_mib) << 20), "cudaMalloc");
  size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
  std::printf("device_load: holding %zu\n", total_bytes - free_bytes);
  std::fflush(stdout);
  if (hold_seconds > 0) {
    std::printf("device_load: ready\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(hold_seconds));
    check_cuda(cudaFree(held), "cudaFree");
    return 0;
  }

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  constexpr int kElements = 1 << 10;
  float* a = static_cast<float*>(held);
  std::vector<char> host(size_t(copy_mib) << 20);
  void* copy_buffer = nullptr;
  if (copy_mib > 0) check_cuda(cudaMalloc(&copy_buffer, host.size()), "cudaMalloc");
  for (long cycle = 0; cycle < cycles; ++cycle) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_ms);
    if (copy_mib > 0) {
      check_cuda(cudaMemcpyAsync(copy_buffer, host.data(), host.size(), cudaMemcpyHostToDevice, stream), "copy");
      check_cuda(cudaMemcpyAsync(host.data(), copy_buffer, host.size(), cudaMemcpyDeviceToHost, stream), "copy");
    }
    while (std::chrono::steady_clock::now() < end) {
      // Two kernels queued ahead: the stream never waits for the host.
      check_cuda(simtorch::add(a, a, a, 0.5f, kElements, stream), "add launch");
      check_cuda(simtorch::add(a, a, a, 0.5f, kElements, stream), "add launch");
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
  }
  if (copy_buffer != nullptr) check_cuda(cudaFree(copy_buffer), "cudaFree");
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  check_cuda(cudaFree(held), "cudaFree");
  std::printf("device_load: done cycles=%ld\n", cycles);
  return 0;
}
