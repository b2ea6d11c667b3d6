// A torch.compile-style program: tensors are allocated and copied through
// the CUDA runtime (as PyTorch does), but the compiled kernels are launched
// by libsimtriton, which dlsyms cuModuleLoadData / cuModuleGetFunction /
// cuLaunchKernel from libcuda.so.1 by name (as Triton's launcher does).
//
// usage: triton_like [--iterations N=10] [--rows R=64] [--cols C=1024]
#include <cstdio>
#include <cstring>
#include <vector>

#include "common/cuda_check.h"
#include "common/options.h"
#include "simtriton.h"

namespace {

void check_triton(CUresult status, const char* what) {
  if (status == CUDA_SUCCESS) return;
  std::fprintf(stderr, "error: %s failed with CUresult %d: %s\n", what, int(status),
               simtritonLastError());
  std::exit(1);
}

CUdeviceptr device_address(const void* pointer) {
  return CUdeviceptr(reinterpret_cast<uintptr_t>(pointer));
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--iterations", "--rows", "--cols"});
  const int iterations = int(options.integer("--iterations", 10));
  const int rows = int(options.integer("--rows", 64));
  const int cols = int(options.integer("--cols", 1024));
  if (iterations < 1 || rows < 1 || cols < 1) {
    std::fprintf(stderr, "error: --iterations, --rows and --cols must be positive\n");
    return 2;
  }
  const int elements = rows * cols;
  const size_t bytes = size_t(elements) * sizeof(float);

  // The runtime creates the primary context; simtriton finds it current.
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  check_cuda(cudaFree(nullptr), "cudaFree(0) context creation");
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");

  std::vector<float> host_a(elements), host_b(elements), host_back(elements);
  for (int i = 0; i < elements; ++i) host_a[i] = float(i % 113) * 0.25f, host_b[i] = float(i % 7);
  float *a, *b, *sum, *probabilities;
  check_cuda(cudaMalloc(&a, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&b, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&sum, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&probabilities, bytes), "cudaMalloc");
  check_cuda(cudaMemcpyAsync(a, host_a.data(), bytes, cudaMemcpyHostToDevice, stream), "H2D");
  check_cuda(cudaMemcpyAsync(b, host_b.data(), bytes, cudaMemcpyHostToDevice, stream), "H2D");

  check_triton(simtritonInit(), "simtritonInit");
  for (int i = 0; i < iterations; ++i) {
    check_triton(simtritonAddMul(stream, device_address(a), device_address(b), device_address(sum),
                                 elements),
                 "triton_poi_fused_add_mul_0");
    check_triton(
        simtritonSoftmax(stream, device_address(sum), device_address(probabilities), rows, cols),
        "triton_red_fused__softmax_1");
  }
  // Kernels only read a and b: the round trip is exact on real GPUs too.
  check_cuda(cudaMemcpyAsync(host_back.data(), a, bytes, cudaMemcpyDeviceToHost, stream), "D2H");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (std::memcmp(host_back.data(), host_a.data(), bytes) != 0) {
    std::fprintf(stderr, "error: device round trip returned different data\n");
    return 1;
  }
  for (float* p : {a, b, sum, probabilities}) check_cuda(cudaFree(p), "cudaFree");
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("triton_like: iterations=%d triton_launches=%d ok\n", iterations, 2 * iterations);
  return 0;
}
