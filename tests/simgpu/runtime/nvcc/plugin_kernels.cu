// A shared library with kernels, as a PyTorch extension or a plugin is: its
// fatbin registers when the library is loaded with dlopen and unregisters
// when dlclose runs its atexit handlers.
#include <cuda_runtime.h>

__global__ void plugin_kernel(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

extern "C" int plugin_launch(float* data, int n, cudaStream_t stream) {
  plugin_kernel<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  return static_cast<int>(cudaGetLastError());
}
