// A job that keeps the GPU busy until it is killed: a loop of kernel
// launches and stream synchronizations on one stream, for --seconds at
// most. After exactly --ready-after iterations it prints
// "long_running: ready iterations=<n>" (flushed), so a test can kill it at a
// known point (e.g. SIGKILL) and know how much work was done before.
// If nobody kills it, it stops after --seconds and exits 0.
//
// usage: long_running [--ready-after N=50] [--seconds S=60] [--launches-per-iteration L=4]
#include <chrono>
#include <cstdio>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/options.h"

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--ready-after", "--seconds", "--launches-per-iteration"});
  const long ready_after = options.integer("--ready-after", 50);
  const double seconds = options.real("--seconds", 60.0);
  const int launches_per_iteration = int(options.integer("--launches-per-iteration", 4));
  if (ready_after < 1 || seconds < 0 || launches_per_iteration < 1) {
    std::fprintf(stderr,
                 "error: --ready-after and --launches-per-iteration >= 1, --seconds >= 0\n");
    return 2;
  }

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  constexpr int kElements = 1 << 16;
  float* a = nullptr;
  float* b = nullptr;
  check_cuda(cudaMalloc(&a, kElements * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMalloc(&b, kElements * sizeof(float)), "cudaMalloc");

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  long iterations = 0;
  while (iterations < ready_after || std::chrono::steady_clock::now() < deadline) {
    for (int l = 0; l < launches_per_iteration; ++l)
      check_cuda(simtorch::add(b, b, a, 0.5f, kElements, stream), "add launch");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    ++iterations;
    if (iterations == ready_after) {
      std::printf("long_running: ready iterations=%ld\n", iterations);
      std::fflush(stdout);
    }
  }

  check_cuda(cudaFree(b), "cudaFree");
  check_cuda(cudaFree(a), "cudaFree");
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("long_running: finished iterations=%ld\n", iterations);
  return 0;
}
