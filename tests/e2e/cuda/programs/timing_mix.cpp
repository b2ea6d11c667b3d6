// GPU work whose duration the simulator models exactly, submitted the ways
// that used to be timed wrong: several threads launching, copying, setting
// memory and queueing host functions on one shared stream at once (each
// thread's work must get its own time, not its neighbour's), short copies
// whose calls take a call stack (the stack must not be counted as GPU time),
// synchronous copies and memsets on the legacy stream, and 2D copies.
//
// Kernels: fill takes --kernel-us, add twice that (the simulator's cost knob,
// common/modelled_costs.h). Copies and memsets take what SIMGPU_*_GBPS and
// SIMGPU_COPY_LATENCY_NS say. Host functions sleep --host-us.
//
// --host-times FILE: each host function's real start and end (CLOCK_MONOTONIC
// ns, one "start end" line each). A sleep on a loaded machine oversleeps by
// milliseconds; what the host function really took is the truth a measured
// duration is held to, not the --host-us it asked for.
//
// usage: timing_mix [--threads N=3] [--rounds R=6] [--kernel-us K=300]
//                   [--host-us H=800] [--copy-bytes B=262144] [--host-times FILE]
#include <cuda_runtime_api.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/modelled_costs.h"
#include "common/options.h"

namespace {

struct Settings {
  int threads = 3;
  int rounds = 6;
  long kernel_us = 300;
  long host_us = 800;
  size_t copy_bytes = 262144;
};
Settings g_settings;
std::mutex g_host_times_lock;
std::vector<std::pair<uint64_t, uint64_t>> g_host_times;

uint64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(now.tv_nsec);
}

void CUDART_CB sleep_on_stream(void*) {
  const uint64_t start_ns = monotonic_ns();
  timespec pause{static_cast<time_t>(g_settings.host_us / 1000000),
                 static_cast<long>(g_settings.host_us % 1000000) * 1000};
  nanosleep(&pause, nullptr);
  const uint64_t end_ns = monotonic_ns();
  std::lock_guard<std::mutex> hold(g_host_times_lock);
  g_host_times.emplace_back(start_ns, end_ns);
}

void run_worker(cudaStream_t shared, float* scratch) {
  const Settings& s = g_settings;
  const int elements = static_cast<int>(s.copy_bytes / sizeof(float));
  cudaStream_t own = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  // The thread's first call that takes a call stack: short, on an idle
  // stream. A thread's first stack is slow (the unwinder sets itself up),
  // and that time must not be counted as GPU work.
  check_cuda(cudaMemsetAsync(scratch, 0, 4096, own), "cudaMemsetAsync");
  check_cuda(cudaStreamSynchronize(own), "cudaStreamSynchronize");
  float* device_a = nullptr;
  float* device_b = nullptr;
  float* pinned = nullptr;
  // The own stream's work runs beside the shared stream's: its own buffers,
  // so that the two never touch the same memory at once (a data race on a
  // real GPU, and one ThreadSanitizer sees in the simulator).
  float* device_own = nullptr;
  float* pinned_own = nullptr;
  check_cuda(cudaMalloc(&device_a, s.copy_bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&device_b, s.copy_bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&device_own, s.copy_bytes), "cudaMalloc");
  check_cuda(cudaMallocHost(&pinned, s.copy_bytes), "cudaMallocHost");
  check_cuda(cudaMallocHost(&pinned_own, s.copy_bytes), "cudaMallocHost");
  for (int round = 0; round < s.rounds; ++round) {
    check_cuda(simtorch::fill(device_a, elements, 1.0f, shared), "fill");
    check_cuda(cudaMemcpyAsync(device_b, pinned, s.copy_bytes, cudaMemcpyHostToDevice, shared), "cudaMemcpyAsync");
    check_cuda(simtorch::add(device_a, device_a, device_b, 2.0f, elements, shared), "add");
    check_cuda(cudaMemsetAsync(device_b, 0, s.copy_bytes, shared), "cudaMemsetAsync");
    check_cuda(cudaLaunchHostFunc(shared, sleep_on_stream, nullptr), "cudaLaunchHostFunc");
    // 2D: s.copy_bytes in rows of 1 KiB, device to device.
    check_cuda(cudaMemcpy2DAsync(device_b, 1024, device_a, 1024, 1024, s.copy_bytes / 1024,
                                 cudaMemcpyDeviceToDevice, shared),
               "cudaMemcpy2DAsync");
    check_cuda(simtorch::fill(device_own, elements, 3.0f, own), "fill");
    check_cuda(cudaMemcpyAsync(pinned_own, device_own, s.copy_bytes, cudaMemcpyDeviceToHost, own), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(own), "cudaStreamSynchronize");
  }
  check_cuda(cudaStreamSynchronize(shared), "cudaStreamSynchronize");
  check_cuda(cudaFreeHost(pinned_own), "cudaFreeHost");
  check_cuda(cudaFreeHost(pinned), "cudaFreeHost");
  check_cuda(cudaFree(device_own), "cudaFree");
  check_cuda(cudaFree(device_b), "cudaFree");
  check_cuda(cudaFree(device_a), "cudaFree");
  check_cuda(cudaStreamDestroy(own), "cudaStreamDestroy");
}

}  // namespace

int main(int argc, char** argv) {
  Settings& s = g_settings;
  const Options options(argc, argv, {"--threads", "--rounds", "--kernel-us", "--host-us", "--copy-bytes", "--host-times"});
  s.threads = static_cast<int>(options.integer("--threads", s.threads));
  s.rounds = static_cast<int>(options.integer("--rounds", s.rounds));
  s.kernel_us = options.integer("--kernel-us", s.kernel_us);
  s.host_us = options.integer("--host-us", s.host_us);
  s.copy_bytes = static_cast<size_t>(options.integer("--copy-bytes", static_cast<long>(s.copy_bytes)));

  const simtorch::KernelHostFunctions& kernels = simtorch::kernel_host_functions();
  if (!set_modelled_kernel_duration(kernels.fill, s.kernel_us * 1000) ||
      !set_modelled_kernel_duration(kernels.add, 2 * s.kernel_us * 1000)) {
    std::fprintf(stderr, "timing_mix: cannot set the simulator's kernel costs\n");
    return 1;
  }

  // One thread alone: synchronous copies and memsets on the legacy stream.
  const int elements = static_cast<int>(s.copy_bytes / sizeof(float));
  float* device = nullptr;
  float* pinned = nullptr;
  check_cuda(cudaMalloc(&device, s.copy_bytes), "cudaMalloc");
  check_cuda(cudaMallocHost(&pinned, s.copy_bytes), "cudaMallocHost");
  check_cuda(cudaMemcpy(device, pinned, s.copy_bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  check_cuda(simtorch::fill(device, elements, 1.0f, nullptr), "fill");
  check_cuda(cudaMemset(device, 0, s.copy_bytes), "cudaMemset");
  check_cuda(cudaMemcpy(pinned, device, s.copy_bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

  // Then several threads on one shared stream.
  cudaStream_t shared = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&shared, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  std::vector<float*> scratch(s.threads);
  for (float*& buffer : scratch) check_cuda(cudaMalloc(&buffer, 4096), "cudaMalloc");
  std::vector<std::thread> workers;
  for (int i = 0; i < s.threads; ++i) workers.emplace_back(run_worker, shared, scratch[i]);
  for (std::thread& worker : workers) worker.join();
  check_cuda(cudaStreamDestroy(shared), "cudaStreamDestroy");
  for (float* buffer : scratch) check_cuda(cudaFree(buffer), "cudaFree");
  check_cuda(cudaFreeHost(pinned), "cudaFreeHost");
  check_cuda(cudaFree(device), "cudaFree");
  const std::string host_times = options.text("--host-times", "");
  if (!host_times.empty()) {
    FILE* out = std::fopen(host_times.c_str(), "w");
    if (out == nullptr) {
      std::perror(host_times.c_str());
      return 1;
    }
    for (const auto& [start_ns, end_ns] : g_host_times) {
      std::fprintf(out, "%llu %llu\n", static_cast<unsigned long long>(start_ns),
                   static_cast<unsigned long long>(end_ns));
    }
    std::fclose(out);
  }
  std::printf("timing_mix: ok\n");
  return 0;
}
