// A plugin with one kernel, dlopen'ed by registrations.cpp after main began:
// its registration runs inside dlopen, while the shim records.
#include <cuda_runtime_api.h>

__global__ void plugin_offset(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 3.0f;
}

extern "C" int plugin_launch(float* data, int n, cudaStream_t stream) {
  plugin_offset<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  return static_cast<int>(cudaGetLastError());
}
