// The occupancy calculator and the L2 persistence controls, used the way the
// CUDA programming guide shows them: cudaOccupancy* on kernels nvcc built
// (the runtime must find each kernel and ask the driver's calculator), the
// device's L2 properties, the persisting set-aside limit, an access policy
// window on a stream, and cudaCtxResetPersistingL2Cache. Each check prints a
// line the test matches; a failed call exits 1 with its error name.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                 \
  do {                                                                                              \
    cudaError_t status_ = (call);                                                                   \
    if (status_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                     \
                   cudaGetErrorName(status_));                                                      \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

// 48 KiB of static shared memory: at most 228 / 48 = 4 blocks per SM.
__global__ void tiled_kernel(float* out) {
  __shared__ float tile[12 * 1024];
  tile[threadIdx.x] = float(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

__global__ void plain_kernel(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

int main() {
  // Occupancy, through the runtime and straight from the driver: the same answer.
  int tiled_blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&tiled_blocks, tiled_kernel, 128, 0));
  std::printf("tiled_kernel blocks per SM at 128 threads: %d\n", tiled_blocks);
  int with_dynamic = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&with_dynamic, tiled_kernel, 128, 64 * 1024,
                                                               cudaOccupancyDefault));
  std::printf("tiled_kernel blocks per SM with 64 KiB dynamic: %d\n", with_dynamic);
  cudaFunction_t function = nullptr;
  CHECK(cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(tiled_kernel)));
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found;
  CHECK(cudaGetDriverEntryPointByVersion("cuOccupancyMaxActiveBlocksPerMultiprocessor", &entry, 7000,
                                         cudaEnableDefault, &found));
  auto driver_occupancy = reinterpret_cast<PFN_cuOccupancyMaxActiveBlocksPerMultiprocessor_v6050>(entry);
  int driver_blocks = -1;
  if (found != cudaDriverEntryPointSuccess ||
      driver_occupancy(&driver_blocks, reinterpret_cast<CUfunction>(function), 128, 0) != CUDA_SUCCESS) {
    std::fprintf(stderr, "cuOccupancyMaxActiveBlocksPerMultiprocessor failed\n");
    return 1;
  }
  std::printf("runtime and driver agree: %s\n", driver_blocks == tiled_blocks ? "yes" : "no");

  // The most dynamic shared memory that still lets 2 blocks share an SM: 2
  // blocks fit with it, 1 byte more and only 1 does.
  size_t dynamic_bytes = 0;
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&dynamic_bytes, tiled_kernel, 2, 128));
  int blocks_at = 0, blocks_above = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_at, tiled_kernel, 128, dynamic_bytes));
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_above, tiled_kernel, 128, dynamic_bytes + 1));
  std::printf("tiled_kernel dynamic shared for 2 blocks: %s KiB, then %d blocks, 1 byte more %d\n",
              dynamic_bytes > 0 ? "some" : "no", blocks_at, blocks_above);

  // cuda_runtime.h's template: cudaFuncGetAttributes, device attributes and
  // cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags for each size.
  int min_grid = 0, block_size = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, plain_kernel));
  std::printf("plain_kernel potential block size: %d, min grid %d\n", block_size, min_grid);

  // Not a kernel: the runtime refuses it as the real one does.
  int ignored = 0;
  cudaError_t not_a_kernel =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ignored, reinterpret_cast<const void*>(&main), 128, 0);
  std::printf("occupancy of a host function: %s\n", cudaGetErrorName(not_a_kernel));
  (void)cudaGetLastError();

  // L2 persistence (programming guide, "L2 cache set-aside").
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("l2CacheSize %d persistingL2CacheMaxSize %d accessPolicyMaxWindowSize %d\n", prop.l2CacheSize,
              prop.persistingL2CacheMaxSize, prop.accessPolicyMaxWindowSize);
  size_t set_aside = static_cast<size_t>(prop.l2CacheSize * 0.75);
  if (set_aside > size_t(prop.persistingL2CacheMaxSize)) set_aside = prop.persistingL2CacheMaxSize;
  CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
  size_t read_back = 0;
  CHECK(cudaDeviceGetLimit(&read_back, cudaLimitPersistingL2CacheSize));
  std::printf("set-aside read back: %s\n", read_back == set_aside ? "yes" : "no");
  cudaError_t too_much = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, size_t(prop.persistingL2CacheMaxSize) + 1);
  std::printf("set-aside above the maximum: %s\n", cudaGetErrorName(too_much));
  (void)cudaGetLastError();

  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  float* data = nullptr;
  CHECK(cudaMalloc(&data, 1 << 20));
  cudaStreamAttrValue attribute{};
  attribute.accessPolicyWindow.base_ptr = data;
  attribute.accessPolicyWindow.num_bytes = 1 << 20;
  attribute.accessPolicyWindow.hitRatio = 0.6f;
  attribute.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attribute.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attribute));
  cudaStreamAttrValue got{};
  CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &got));
  std::printf("window read back: %s\n",
              got.accessPolicyWindow.base_ptr == data && got.accessPolicyWindow.num_bytes == (1u << 20) &&
                      got.accessPolicyWindow.hitRatio == 0.6f &&
                      got.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting &&
                      got.accessPolicyWindow.missProp == cudaAccessPropertyStreaming
                  ? "yes"
                  : "no");
  cudaStream_t copy;
  CHECK(cudaStreamCreate(&copy));
  CHECK(cudaStreamCopyAttributes(copy, stream));
  cudaStreamAttrValue copied{};
  CHECK(cudaStreamGetAttribute(copy, cudaStreamAttributeAccessPolicyWindow, &copied));
  std::printf("window copied: %s\n", copied.accessPolicyWindow.base_ptr == data ? "yes" : "no");

  cudaStreamAttrValue too_wide = attribute;
  too_wide.accessPolicyWindow.num_bytes = size_t(prop.accessPolicyMaxWindowSize) + 1;
  std::printf("window above the maximum: %s\n",
              cudaGetErrorName(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &too_wide)));
  (void)cudaGetLastError();

  plain_kernel<<<(1 << 18) / 256, 256, 0, stream>>>(data);
  CHECK(cudaGetLastError());
  // Done with the persisting data: the guide's reset sequence.
  attribute.accessPolicyWindow.num_bytes = 0;
  CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attribute));
  CHECK(cudaCtxResetPersistingL2Cache());
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaStreamDestroy(copy));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(data));
  std::printf("OK\n");
  return 0;
}
