// The program exec_gpu execs: a process image of its own that uses the GPU
// from scratch (one small workload) and says so.
//
// usage: gpu_child [--launches L=4]
#include <cstdio>

#include "common/options.h"
#include "common/small_workload.h"

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--launches"});
  const int launches = int(options.integer("--launches", 4));
  if (!run_small_workload(launches)) {
    std::fprintf(stderr, "error: gpu_child: device round trip returned different data\n");
    return 1;
  }
  std::printf("gpu_child: launches=%d ok\n", launches);
  return 0;
}
