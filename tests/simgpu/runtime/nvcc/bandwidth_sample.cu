// A memory bandwidth measurement written the way CUDA samples are written
// (pageable and pinned host buffers, events around repeated copies, GB/s
// printed per direction). Nothing in it knows about the simulator: it is the
// "ordinary program" the simulated stack must run unchanged.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)

static void check(cudaError_t result, const char* func, const char* file, int line) {
  if (result != cudaSuccess) {
    std::fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\"\n", file, line,
                 static_cast<int>(result), cudaGetErrorName(result), func);
    std::exit(EXIT_FAILURE);
  }
}

enum class HostMemory { pageable, pinned };

static float measure(cudaMemcpyKind kind, HostMemory host_memory, size_t bytes, int repeats) {
  unsigned char* host = nullptr;
  if (host_memory == HostMemory::pinned) {
    checkCudaErrors(cudaMallocHost(&host, bytes));
  } else {
    host = static_cast<unsigned char*>(std::malloc(bytes));
  }
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(i & 0xff);
  unsigned char* device_a = nullptr;
  unsigned char* device_b = nullptr;
  checkCudaErrors(cudaMalloc(&device_a, bytes));
  checkCudaErrors(cudaMalloc(&device_b, bytes));
  checkCudaErrors(cudaMemcpy(device_a, host, bytes, cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  checkCudaErrors(cudaEventRecord(start, 0));
  for (int i = 0; i < repeats; ++i) {
    switch (kind) {
      case cudaMemcpyHostToDevice:
        checkCudaErrors(cudaMemcpyAsync(device_a, host, bytes, kind, 0));
        break;
      case cudaMemcpyDeviceToHost:
        checkCudaErrors(cudaMemcpyAsync(host, device_a, bytes, kind, 0));
        break;
      default:
        checkCudaErrors(cudaMemcpyAsync(device_b, device_a, bytes, kind, 0));
        break;
    }
  }
  checkCudaErrors(cudaEventRecord(stop, 0));
  checkCudaErrors(cudaEventSynchronize(stop));
  float elapsed_ms = 0.0f;
  checkCudaErrors(cudaEventElapsedTime(&elapsed_ms, start, stop));

  // The data must have survived the trip.
  if (kind == cudaMemcpyDeviceToHost) {
    for (size_t i = 0; i < bytes; ++i) {
      if (host[i] != static_cast<unsigned char>(i & 0xff)) {
        std::fprintf(stderr, "data mismatch at byte %zu\n", i);
        std::exit(EXIT_FAILURE);
      }
    }
  }

  checkCudaErrors(cudaEventDestroy(start));
  checkCudaErrors(cudaEventDestroy(stop));
  checkCudaErrors(cudaFree(device_a));
  checkCudaErrors(cudaFree(device_b));
  if (host_memory == HostMemory::pinned) {
    checkCudaErrors(cudaFreeHost(host));
  } else {
    std::free(host);
  }
  const double gigabytes = static_cast<double>(bytes) * repeats / 1e9;
  return static_cast<float>(gigabytes / (elapsed_ms / 1e3));
}

int main(int argc, char** argv) {
  size_t bytes = 32 << 20;
  if (argc > 1) bytes = std::strtoull(argv[1], nullptr, 10);
  const int repeats = 4;

  int device = 0;
  cudaDeviceProp prop;
  checkCudaErrors(cudaSetDevice(device));
  checkCudaErrors(cudaGetDeviceProperties(&prop, device));
  std::printf(" Device %d: %s\n", device, prop.name);
  std::printf(" Transfer size (bytes): %zu\n", bytes);

  std::printf(" Host to Device Bandwidth, pageable (GB/s): %.1f\n",
              measure(cudaMemcpyHostToDevice, HostMemory::pageable, bytes, repeats));
  std::printf(" Host to Device Bandwidth, pinned (GB/s): %.1f\n",
              measure(cudaMemcpyHostToDevice, HostMemory::pinned, bytes, repeats));
  std::printf(" Device to Host Bandwidth, pinned (GB/s): %.1f\n",
              measure(cudaMemcpyDeviceToHost, HostMemory::pinned, bytes, repeats));
  std::printf(" Device to Device Bandwidth (GB/s): %.1f\n",
              measure(cudaMemcpyDeviceToDevice, HostMemory::pinned, bytes, repeats));
  std::printf("Result = PASS\n");
  return 0;
}
