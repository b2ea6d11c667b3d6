// Several threads end the process at the same moment: each makes a few CUDA
// calls, waits until all have, then calls exit(3) (or _exit(3) with
// --underscore). glibc runs the atexit handlers and destructors in one of
// them, and another goes on to end the process as soon as none is left.
//
// usage: concurrent_exit [--threads N=4] [--underscore]
#include <cuda_runtime.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  int threads = 4;
  bool underscore = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--underscore") == 0) underscore = true;
  }
  std::atomic<int> ready{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      void* block = nullptr;
      if (cudaMalloc(&block, 4096) != cudaSuccess || cudaMemset(block, 0, 4096) != cudaSuccess) std::abort();
      ready.fetch_add(1);
      while (ready.load() < threads) {
      }
      if (underscore) _exit(3);
      std::exit(3);
    });
  }
  for (std::thread& worker : workers) worker.join();
  return 0;  // never reached
}
