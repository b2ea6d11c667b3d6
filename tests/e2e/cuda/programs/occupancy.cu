// Kernels whose resources the trace must carry (issue 16): one with static
// shared memory, launched with a large and a small grid, and one first
// launched inside a global-mode stream capture (the shim asks the driver
// about it then, which must not invalidate the capture). Prints what the
// program itself sees through cudaFuncGetAttributes and
// cudaGetDeviceProperties, and fails if the runtime's last error is not
// cudaSuccess after the launches.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void tiled_scale(float* data, float factor) {
  __shared__ float tile[1024];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = data[i] * factor;
  __syncthreads();
  data[i] = tile[(threadIdx.x + 1) % blockDim.x];
}

__global__ void captured_add(float* data, float value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  data[i] += value;
}

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e = (call);                                                                \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));              \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

int main() {
  constexpr int kBlock = 256;
  constexpr int kBlocks = 1056;
  float* data = nullptr;
  CHECK(cudaMalloc(&data, sizeof(float) * kBlock * kBlocks));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tiled_scale<<<kBlocks, kBlock, 0, stream>>>(data, 2.0f);
  tiled_scale<<<8, kBlock, 0, stream>>>(data, 0.5f);
  CHECK(cudaGetLastError());

  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  captured_add<<<kBlocks, kBlock, 0, stream>>>(data, 1.0f);
  CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());

  cudaFuncAttributes attributes;
  CHECK(cudaFuncGetAttributes(&attributes, tiled_scale));
  std::printf("tiled_scale regs=%d static_shared=%zu max_threads=%d local=%zu\n", attributes.numRegs,
              attributes.sharedSizeBytes, attributes.maxThreadsPerBlock, attributes.localSizeBytes);
  CHECK(cudaFuncGetAttributes(&attributes, captured_add));
  std::printf("captured_add regs=%d static_shared=%zu max_threads=%d local=%zu\n", attributes.numRegs,
              attributes.sharedSizeBytes, attributes.maxThreadsPerBlock, attributes.localSizeBytes);
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device sms=%d threads_per_sm=%d blocks_per_sm=%d regs_per_sm=%d regs_per_block=%d "
              "shared_per_sm=%zu shared_per_block=%zu optin=%zu reserved=%zu warp=%d cc=%d.%d\n",
              prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor, prop.maxBlocksPerMultiProcessor,
              prop.regsPerMultiprocessor, prop.regsPerBlock, prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlock,
              prop.sharedMemPerBlockOptin, prop.reservedSharedMemPerBlock, prop.warpSize, prop.major, prop.minor);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  return 0;
}
