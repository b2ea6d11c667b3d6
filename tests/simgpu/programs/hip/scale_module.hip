// A code object loaded at run time with hipModuleLoad (hip_training --module).
#include <hip/hip_runtime.h>

extern "C" __global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 0.5f;
}
