// An ordinary CUDA C++ program: two kernels (one a template), two streams,
// asynchronous copies and memsets, events, a cross-stream dependency and
// device symbols. Built by nvcc three ways (shared runtime, shared runtime
// with --default-stream per-thread, static runtime) and run on the simulated
// stack. A simulator cannot execute kernels, so the program checks only what
// copies and memsets produce; the kernels write buffers nobody checks.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t status_ = (call);                                                     \
    if (status_ != cudaSuccess) {                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorName(status_), cudaGetErrorString(status_));           \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__device__ int device_table[64];
__constant__ float constant_coefficients[16];
__managed__ int managed_counter = 41;

template <typename T>
__global__ void scale(T* data, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void fill_iota(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i + device_table[i % 64];
}

namespace {

constexpr int kElements = 1 << 16;
constexpr size_t kBytes = kElements * sizeof(int);
constexpr size_t kMemsetOffset = 1000;
constexpr size_t kMemsetBytes = 256;
constexpr int kMemsetValue = 0xEE;

bool check_equal(const char* what, const unsigned char* actual, const unsigned char* expected,
                 size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) {
    if (actual[i] != expected[i]) {
      std::fprintf(stderr, "%s: byte %zu is 0x%02x, expected 0x%02x\n", what, i, actual[i],
                   expected[i]);
      return false;
    }
  }
  return true;
}

// The device name the driver knows a kernel by, via the public runtime API
// (cudaGetFuncBySymbol) and the driver's cuFuncGetName.
const char* driver_name_of(const void* kernel) {
  cudaFunction_t function = nullptr;
  CHECK(cudaGetFuncBySymbol(&function, kernel));
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CHECK(cudaGetDriverEntryPointByVersion("cuFuncGetName", &entry, CUDART_VERSION,
                                         cudaEnableDefault, &found));
  auto func_get_name = reinterpret_cast<CUresult (*)(const char**, CUfunction)>(entry);
  const char* name = nullptr;
  if (found != cudaDriverEntryPointSuccess ||
      func_get_name(&name, reinterpret_cast<CUfunction>(function)) != CUDA_SUCCESS) {
    return "(unknown)";
  }
  return name;
}

}  // namespace

int main() {
  int device_count = 0;
  CHECK(cudaGetDeviceCount(&device_count));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("devices: %d, device 0: %s, compute capability %d.%d\n", device_count, prop.name,
              prop.major, prop.minor);

  cudaStream_t streams[2];
  CHECK(cudaStreamCreate(&streams[0]));
  CHECK(cudaStreamCreateWithFlags(&streams[1], cudaStreamNonBlocking));
  cudaEvent_t start[2];
  cudaEvent_t stop[2];
  unsigned char* host_in[2];
  unsigned char* host_out[2];
  unsigned char* device_in[2];
  int* kernel_out[2];
  for (int s = 0; s < 2; ++s) {
    CHECK(cudaEventCreate(&start[s]));
    CHECK(cudaEventCreate(&stop[s]));
    CHECK(cudaMallocHost(&host_in[s], kBytes));
    CHECK(cudaHostAlloc(&host_out[s], kBytes, cudaHostAllocDefault));
    CHECK(cudaMalloc(&device_in[s], kBytes));
    CHECK(cudaMalloc(&kernel_out[s], kBytes));
    for (size_t i = 0; i < kBytes; ++i) host_in[s][i] = static_cast<unsigned char>(i * (s + 3));
  }

  const dim3 block(256);
  const dim3 grid((kElements + block.x - 1) / block.x);
  for (int s = 0; s < 2; ++s) {
    CHECK(cudaEventRecord(start[s], streams[s]));
    CHECK(cudaMemcpyAsync(device_in[s], host_in[s], kBytes, cudaMemcpyHostToDevice, streams[s]));
    if (s == 0) {
      fill_iota<<<grid, block, 0, streams[s]>>>(kernel_out[s], kElements);
    } else {
      scale<float><<<grid, block, 0, streams[s]>>>(reinterpret_cast<float*>(kernel_out[s]), 2.0f,
                                                    kElements);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemsetAsync(device_in[s] + kMemsetOffset, kMemsetValue, kMemsetBytes, streams[s]));
    CHECK(cudaMemcpyAsync(host_out[s], device_in[s], kBytes, cudaMemcpyDeviceToHost, streams[s]));
    CHECK(cudaEventRecord(stop[s], streams[s]));
  }

  // Stream 1 copies stream 0's buffer once stream 0 is done with it.
  unsigned char* device_copy = nullptr;
  std::vector<unsigned char> host_copy(kBytes);
  CHECK(cudaMalloc(&device_copy, kBytes));
  CHECK(cudaStreamWaitEvent(streams[1], stop[0], 0));
  CHECK(cudaMemcpyAsync(device_copy, device_in[0], kBytes, cudaMemcpyDeviceToDevice, streams[1]));
  CHECK(cudaMemcpyAsync(host_copy.data(), device_copy, kBytes, cudaMemcpyDefault, streams[1]));
  CHECK(cudaStreamSynchronize(streams[1]));
  CHECK(cudaStreamSynchronize(streams[0]));

  bool copies_ok = true;
  for (int s = 0; s < 2; ++s) {
    std::vector<unsigned char> expected(host_in[s], host_in[s] + kBytes);
    std::memset(expected.data() + kMemsetOffset, kMemsetValue, kMemsetBytes);
    copies_ok &= check_equal(s == 0 ? "stream 0 round trip" : "stream 1 round trip", host_out[s],
                             expected.data(), kBytes);
    if (s == 0) {
      copies_ok &= check_equal("cross-stream copy", host_copy.data(), expected.data(), kBytes);
    }
    float elapsed_ms = 0;
    CHECK(cudaEventElapsedTime(&elapsed_ms, start[s], stop[s]));
    if (!(elapsed_ms > 0)) {
      std::fprintf(stderr, "stream %d: elapsed %f ms\n", s, elapsed_ms);
      copies_ok = false;
    }
  }
  std::printf("copies and memsets: %s\n", copies_ok ? "ok" : "WRONG");

  int table[64];
  int table_back[64] = {};
  for (int i = 0; i < 64; ++i) table[i] = i * i - 7;
  CHECK(cudaMemcpyToSymbol(device_table, table, sizeof(table)));
  CHECK(cudaMemcpyFromSymbol(table_back, device_table, sizeof(table_back)));
  float coefficients[4] = {0.5f, 1.5f, -2.0f, 8.0f};
  float coefficients_back[4] = {};
  CHECK(cudaMemcpyToSymbolAsync(constant_coefficients, coefficients, sizeof(coefficients),
                                4 * sizeof(float), cudaMemcpyHostToDevice, streams[0]));
  CHECK(cudaMemcpyFromSymbolAsync(coefficients_back, constant_coefficients,
                                  sizeof(coefficients_back), 4 * sizeof(float),
                                  cudaMemcpyDeviceToHost, streams[0]));
  CHECK(cudaStreamSynchronize(streams[0]));
  bool symbols_ok =
      std::memcmp(table, table_back, sizeof(table)) == 0 &&
      std::memcmp(coefficients, coefficients_back, sizeof(coefficients)) == 0;
  std::printf("device symbols: %s\n", symbols_ok ? "ok" : "WRONG");

  // A __managed__ variable: host code reaches it through the pointer the
  // runtime fills in (__cudaInitModule); it starts with its initializer and
  // is the same memory the symbol copies address.
  int managed_initial = managed_counter;
  managed_counter = 1234;
  int managed_back = 0;
  CHECK(cudaMemcpyFromSymbol(&managed_back, managed_counter, sizeof(int)));
  int managed_new = 99;
  CHECK(cudaMemcpyToSymbol(managed_counter, &managed_new, sizeof(int)));
  bool managed_ok = managed_initial == 41 && managed_back == 1234 && managed_counter == 99;
  std::printf("managed variable: %s\n", managed_ok ? "ok" : "WRONG");
  symbols_ok &= managed_ok;

  std::printf("kernel fill_iota: %s\n", driver_name_of(reinterpret_cast<const void*>(fill_iota)));
  std::printf("kernel scale<float>: %s\n",
              driver_name_of(reinterpret_cast<const void*>(scale<float>)));
  cudaFuncAttributes attributes;
  CHECK(cudaFuncGetAttributes(&attributes, fill_iota));
  std::printf("fill_iota max threads per block: %d\n", attributes.maxThreadsPerBlock);

  for (int s = 0; s < 2; ++s) {
    CHECK(cudaEventDestroy(start[s]));
    CHECK(cudaEventDestroy(stop[s]));
    CHECK(cudaFreeHost(host_in[s]));
    CHECK(cudaFreeHost(host_out[s]));
    CHECK(cudaFree(device_in[s]));
    CHECK(cudaFree(kernel_out[s]));
    CHECK(cudaStreamDestroy(streams[s]));
  }
  CHECK(cudaFree(device_copy));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaGetLastError());
  if (!copies_ok || !symbols_ok) return 1;
  std::printf("OK\n");
  return 0;
}
