// A GPU program that dies in the middle of its work:
//   --mode segv  (default) writes through a null pointer: a real SIGSEGV
//                from the kernel, as in a bug in native code;
//   --mode abort calls abort(): SIGABRT, as from a failed assert or an
//                uncaught C++ exception.
// Before dying it completes --launches kernels (synchronized), then leaves
// --in-flight more queued on a stream without waiting for them, and prints
// "crash: about to <mode>" (flushed) so a test knows how far it got.
//
// usage: crash [--mode segv|abort] [--launches N=16] [--in-flight K=4]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/options.h"
#include "common/small_workload.h"

namespace {

// volatile: the compiler must emit the store instead of reasoning about
// undefined behaviour and deleting or replacing it.
int* volatile g_null_pointer = nullptr;

// A real fault (SIGSEGV), also in a UBSan build: the null store is the point.
__attribute__((noinline, no_sanitize("undefined"))) void write_through_null() { *g_null_pointer = 42; }

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--mode", "--launches", "--in-flight"});
  const std::string mode = options.text("--mode", "segv");
  const int launches = int(options.integer("--launches", 16));
  const int in_flight = int(options.integer("--in-flight", 4));
  if ((mode != "segv" && mode != "abort") || launches < 0 || in_flight < 0) {
    std::fprintf(stderr, "error: --mode must be segv or abort, counts >= 0\n");
    return 2;
  }

  if (!run_small_workload(launches)) return 1;

  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  float* buffer = nullptr;
  constexpr int kElements = 1 << 16;
  check_cuda(cudaMalloc(&buffer, kElements * sizeof(float)), "cudaMalloc");
  for (int i = 0; i < in_flight; ++i)
    check_cuda(simtorch::fill(buffer, kElements, float(i), stream), "fill launch");

  std::printf("crash: about to %s\n", mode.c_str());
  std::fflush(stdout);
  if (mode == "abort") std::abort();
  write_through_null();
  std::fprintf(stderr, "error: the null pointer write did not crash\n");
  return 1;
}
