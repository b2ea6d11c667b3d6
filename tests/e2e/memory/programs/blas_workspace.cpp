// Two handles of the cuBLAS-like library, which allocates its workspace with
// cuMemAlloc obtained through cuGetProcAddress_v2 (never through the
// runtime, never through a symbol the program links), then both destroyed.
//
// usage: blas_workspace
#include <cstdio>

#include "simblas.h"

int main() {
  simblasHandle_t first = nullptr, second = nullptr;
  if (simblasCreate(&first) != SIMBLAS_STATUS_SUCCESS || simblasCreate(&second) != SIMBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: simblasCreate failed\n");
    return 1;
  }
  if (simblasDestroy(second) != SIMBLAS_STATUS_SUCCESS || simblasDestroy(first) != SIMBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: simblasDestroy failed\n");
    return 1;
  }
  std::printf("blas_workspace: handles=2 ok\n");
  return 0;
}
