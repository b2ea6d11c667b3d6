// A library with kernels, linked by registrations.cpp: nvcc's static
// constructor registers them (__cudaRegisterFatBinary, __cudaRegisterFunction)
// when the library is loaded, which for a linked library is before the
// preloaded shim's own constructor has run.
#include <cuda_runtime_api.h>

__global__ void library_scale(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= 2.0f;
}

__global__ void library_shift(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

extern "C" int library_launch(float* data, int n, cudaStream_t stream) {
  library_scale<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  library_shift<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  return static_cast<int>(cudaGetLastError());
}
