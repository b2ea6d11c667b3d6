// A training loop that makes the mistakes `stats --section recommendations`
// looks for (recommendations_test.cpp): every NVTX "step" uploads from
// pageable memory with a synchronous cudaMemcpy, allocates and frees a
// scratch buffer, launches a one-block kernel, reads a 4-byte "loss" back
// (the .item() pattern) and then "loads the next batch" on the launching
// thread for 20 ms with the GPU idle. Tests find the lines by their @site:
// markers.
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

// CPU work on the thread that feeds the GPU, as a data loader in the
// training process would be: nothing is queued on the GPU meanwhile.
void load_next_batch() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

__global__ void tiny_add(float* data, float value) { data[threadIdx.x] += value; }

#define CHECK(call)                                                           \
  do {                                                                        \
    cudaError_t e = (call);                                                   \
    if (e != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e)); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main() {
  constexpr int kSteps = 5;
  constexpr size_t kFloats = 1 << 16;
  std::vector<float> weights_host(kFloats, 1.0f);  // pageable
  float* weights = nullptr;
  CHECK(cudaMalloc(&weights, kFloats * sizeof(float)));
  float loss = 0;
  for (int step = 0; step < kSteps; ++step) {
    nvtxRangePushA("step");
    CHECK(cudaMemcpy(weights, weights_host.data(), kFloats * sizeof(float), cudaMemcpyHostToDevice));  // @site:upload
    float* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, 4096));  // @site:scratch_alloc
    tiny_add<<<1, 32>>>(weights, 1.0f);  // @site:tiny_kernel
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(&loss, weights, sizeof loss, cudaMemcpyDeviceToHost));  // @site:item_read
    load_next_batch();  // @site:idle_gap
    CHECK(cudaFree(scratch));  // @site:scratch_free
    nvtxRangePop();
  }
  CHECK(cudaFree(weights));
  std::printf("loss %.1f\n", loss);
  return 0;
}
