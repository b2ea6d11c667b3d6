// The kernel half of libsimtensor_ext.so, built only when nvcc exists: a
// <<<>>> launch from inside the ctypes-loaded library, registered by the
// library's own nvcc-generated constructor.
#include <cuda_runtime_api.h>

namespace simtensor {

template <typename T>
__global__ void fill_kernel(T* data, long count, T value) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < count;
       i += long(gridDim.x) * blockDim.x)
    data[i] = value;
}

}  // namespace simtensor

extern "C" __attribute__((visibility("default"))) int simtensor_fill(float* device, long count,
                                                                     float value) {
  const unsigned blocks = unsigned(count / 256 + 1 < 1024 ? count / 256 + 1 : 1024);
  simtensor::fill_kernel<float><<<blocks, 256>>>(device, count, value);
  return cudaGetLastError();
}
