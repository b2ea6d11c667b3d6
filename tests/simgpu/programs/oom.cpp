// Exhausts device memory the way a training job does when the batch is too
// large: allocate --chunk-mib blocks until cudaMalloc fails with
// cudaErrorMemoryAllocation, report it like PyTorch's "CUDA out of memory"
// message, release everything, show that the device is usable again, exit 0.
// An OOM is not sticky in CUDA: the context stays valid.
//
// usage: oom [--chunk-mib C=256] [--max-chunks M=100000]
#include <cstdio>
#include <vector>

#include "common/cuda_check.h"
#include "common/options.h"

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--chunk-mib", "--max-chunks"});
  const long chunk_mib = options.integer("--chunk-mib", 256);
  const long max_chunks = options.integer("--max-chunks", 100000);
  if (chunk_mib < 1 || max_chunks < 1) {
    std::fprintf(stderr, "error: --chunk-mib and --max-chunks must be positive\n");
    return 2;
  }
  const size_t chunk_bytes = size_t(chunk_mib) << 20;

  size_t free_bytes = 0, total_bytes = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");

  std::vector<void*> chunks;
  cudaError_t failure = cudaSuccess;
  while (long(chunks.size()) < max_chunks) {
    void* chunk = nullptr;
    failure = cudaMalloc(&chunk, chunk_bytes);
    if (failure != cudaSuccess) break;
    chunks.push_back(chunk);
  }
  if (failure != cudaErrorMemoryAllocation) {
    std::fprintf(stderr, "error: expected cudaErrorMemoryAllocation after %zu chunks, got %s\n",
                 chunks.size(), cudaGetErrorName(failure));
    return 1;
  }
  // cudaMalloc also records the error as the thread's last error; reading it
  // clears it, and a second read must say success (OOM is not sticky).
  const cudaError_t last = cudaGetLastError();
  const cudaError_t after = cudaGetLastError();
  std::printf(
      "oom: CUDA out of memory. Tried to allocate %ld MiB (GPU 0; %zu MiB total capacity; "
      "%zu MiB free at start; %zu MiB already allocated in %zu chunks)\n",
      chunk_mib, total_bytes >> 20, free_bytes >> 20, (chunks.size() * chunk_bytes) >> 20,
      chunks.size());
  if (last != cudaErrorMemoryAllocation || after != cudaSuccess) {
    std::fprintf(stderr, "error: cudaGetLastError after the OOM returned %s then %s\n",
                 cudaGetErrorName(last), cudaGetErrorName(after));
    return 1;
  }

  for (void* chunk : chunks) check_cuda(cudaFree(chunk), "cudaFree");
  void* retry = nullptr;
  check_cuda(cudaMalloc(&retry, chunk_bytes), "cudaMalloc after freeing everything");
  check_cuda(cudaFree(retry), "cudaFree");
  std::printf("oom: recovered after freeing %zu chunks\n", chunks.size());
  return 0;
}
