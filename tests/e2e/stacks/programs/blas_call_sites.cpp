// blas_call_sites: GEMMs through a cuBLAS-like library named as cuBLAS is
// (libcublas.so.13: the simulated libsimblas under that name), for the
// call-site attribution tests (tests/e2e/stacks). Each launch's stack runs
// main -> multiply -> the library's internals -> the driver; the call site
// must be multiply's line, not a frame of the library or the runtime. The
// tests find the lines by their "@site:" markers.
//
//   blas_call_sites [--repeat N]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "simblas.h"

namespace {

constexpr int kSide = 64;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "blas_call_sites: %s\n", what);
  std::exit(1);
}

__attribute__((noinline)) void multiply(simblasHandle_t handle, const float* a, const float* b, float* c) {
  const float alpha = 1.0f, beta = 0.0f;
  // One line: the call's return address must map to the marked line.
  // clang-format off
  const simblasStatus_t status = simblasSgemm(handle, SIMBLAS_OP_N, SIMBLAS_OP_N, kSide, kSide, kSide, &alpha, a, kSide, b, kSide, &beta, c, kSide);  // @site:gemm_call
  // clang-format on
  if (status != SIMBLAS_STATUS_SUCCESS) fail(simblasGetStatusString(status));
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 1;
  if (argc == 3 && std::strcmp(argv[1], "--repeat") == 0) repeat = std::atoi(argv[2]);
  void* memory = nullptr;
  if (cudaMalloc(&memory, 3 * sizeof(float) * kSide * kSide) != cudaSuccess) fail("cudaMalloc failed");
  float* matrices = static_cast<float*>(memory);
  simblasHandle_t handle = nullptr;
  if (simblasCreate(&handle) != SIMBLAS_STATUS_SUCCESS) fail("simblasCreate failed");  // @site:blas_create
  for (int i = 0; i < repeat; ++i)
    multiply(handle, matrices, matrices + kSide * kSide, matrices + 2 * kSide * kSide);
  if (cudaDeviceSynchronize() != cudaSuccess) fail("cudaDeviceSynchronize failed");
  simblasDestroy(handle);
  cudaFree(matrices);
  std::printf("blas_call_sites: gemms=%d ok\n", repeat);
  return 0;
}
