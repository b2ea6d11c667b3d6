#include "common/small_workload.h"

#include <cstring>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"

bool run_small_workload(int launches, cudaStream_t stream) {
  constexpr int kElements = 4096;
  constexpr size_t kBytes = kElements * sizeof(float);
  std::vector<float> host_in(kElements), host_back(kElements);
  for (int e = 0; e < kElements; ++e) host_in[e] = float(e) * 0.5f;

  float* device_in = nullptr;
  float* device_out = nullptr;
  check_cuda(cudaMalloc(&device_in, kBytes), "cudaMalloc");
  check_cuda(cudaMalloc(&device_out, kBytes), "cudaMalloc");
  check_cuda(cudaMemcpyAsync(device_in, host_in.data(), kBytes, cudaMemcpyHostToDevice, stream),
             "H2D");
  for (int i = 0; i < launches; ++i)
    check_cuda(simtorch::relu(device_out, device_in, kElements, stream), "relu launch");
  // Kernels only read device_in, so the round trip is exact on real GPUs too.
  check_cuda(cudaMemcpyAsync(host_back.data(), device_in, kBytes, cudaMemcpyDeviceToHost, stream),
             "D2H");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  check_cuda(cudaFree(device_out), "cudaFree");
  check_cuda(cudaFree(device_in), "cudaFree");
  return std::memcmp(host_in.data(), host_back.data(), kBytes) == 0;
}
