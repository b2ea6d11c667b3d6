// libsimtensor_ext.so: a stand-in for a PyTorch extension module. Python
// loads it RTLD_LOCAL with ctypes, and it calls the CUDA runtime from inside
// itself (it is linked against libcudart.so.13), so the runtime calls come
// from a library the program itself never linked. Every function returns a
// cudaError_t (0 = success) so the script can report failures by name.
#include <cuda_runtime_api.h>

#include <cstddef>

#define SIMTENSOR_API extern "C" __attribute__((visibility("default")))

SIMTENSOR_API int simtensor_device_count(int* count) { return cudaGetDeviceCount(count); }

SIMTENSOR_API int simtensor_empty(void** device, size_t bytes) { return cudaMalloc(device, bytes); }

SIMTENSOR_API int simtensor_free(void* device) { return cudaFree(device); }

SIMTENSOR_API int simtensor_upload(void* device, const void* host, size_t bytes) {
  return cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
}

SIMTENSOR_API int simtensor_download(void* host, const void* device, size_t bytes) {
  return cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost);
}

SIMTENSOR_API int simtensor_copy(void* device_dst, const void* device_src, size_t bytes) {
  return cudaMemcpy(device_dst, device_src, bytes, cudaMemcpyDeviceToDevice);
}

SIMTENSOR_API int simtensor_zero(void* device, size_t bytes) {
  return cudaMemset(device, 0, bytes);
}

SIMTENSOR_API int simtensor_synchronize(void) { return cudaDeviceSynchronize(); }

SIMTENSOR_API const char* simtensor_error_name(int error) {
  return cudaGetErrorName(static_cast<cudaError_t>(error));
}
