// Error handling for the target programs: a failed CUDA call is a bug in the
// simulated stack or the program, so say which call failed and exit 1
// (never a signal, so tests can tell failures from the intended crashes).
#ifndef SIMGPU_PROGRAMS_CUDA_CHECK_H
#define SIMGPU_PROGRAMS_CUDA_CHECK_H

// cuda_runtime.h (not only _api.h): its typed C++ overloads (cudaMalloc(float**)).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

inline void check_cuda(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "error: %s failed: %s (%s)\n", what, cudaGetErrorName(status),
               cudaGetErrorString(status));
  std::exit(1);
}

#endif
