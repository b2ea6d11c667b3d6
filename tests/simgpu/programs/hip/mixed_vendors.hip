// Both vendors in one process: HIP work through libamdhip64 (linked, with a
// kernel of its own) and CUDA work through libcudart.so.13, which the
// program loads at run time with dlopen, as frameworks that support both do.
// Each side allocates, copies in, works, copies out and checks its bytes.
// The HIP kernel is launched twice per round: with <<<>>> and through a
// hipLaunchKernel found with dlsym.
//
//   mixed_vendors [--rounds N]
//
// stdout: "mixed_vendors: N rounds on <AMD device> and <CUDA device count> CUDA device(s) ok".
#include <dlfcn.h>
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#define CHECK_HIP(call)                                                                     \
  do {                                                                                      \
    hipError_t e_ = (call);                                                                 \
    if (e_ != hipSuccess) {                                                                 \
      std::fprintf(stderr, "mixed_vendors: %s: %s\n", #call, hipGetErrorName(e_));          \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

__global__ void increment(unsigned char* bytes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) bytes[i] += 1;
}

// The CUDA runtime functions used, by their documented signatures
// (cudaError_t is an int-sized enum; cudaMemcpyKind likewise).
struct Cuda {
  int (*get_device_count)(int*);
  int (*malloc)(void**, size_t);
  int (*memcpy)(void*, const void*, size_t, int);
  int (*memset)(void*, int, size_t);
  int (*device_synchronize)();
  int (*free)(void*);
};
constexpr int kCudaMemcpyHostToDevice = 1, kCudaMemcpyDeviceToHost = 2;

Cuda load_cuda() {
  void* library = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "mixed_vendors: %s\n", dlerror());
    std::exit(3);
  }
  Cuda cuda{};
  auto get = [&](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(library, name));
    if (slot == nullptr) {
      std::fprintf(stderr, "mixed_vendors: libcudart has no %s\n", name);
      std::exit(3);
    }
  };
  get(cuda.get_device_count, "cudaGetDeviceCount");
  get(cuda.malloc, "cudaMalloc");
  get(cuda.memcpy, "cudaMemcpy");
  get(cuda.memset, "cudaMemset");
  get(cuda.device_synchronize, "cudaDeviceSynchronize");
  get(cuda.free, "cudaFree");
  return cuda;
}

#define CHECK_CUDA(call)                                                                    \
  do {                                                                                      \
    int e_ = (call);                                                                        \
    if (e_ != 0) {                                                                          \
      std::fprintf(stderr, "mixed_vendors: %s: CUDA error %d\n", #call, e_);                \
      std::exit(4);                                                                         \
    }                                                                                       \
  } while (0)

int main(int argc, char** argv) {
  int rounds = 3;
  if (argc == 3 && !std::strcmp(argv[1], "--rounds")) rounds = std::atoi(argv[2]);
  else if (argc != 1) {
    std::fprintf(stderr, "usage: %s [--rounds N]\n", argv[0]);
    return 64;
  }
  constexpr int kBytes = 1 << 16;
  std::vector<unsigned char> host(kBytes, 7), back(kBytes);
  const Cuda cuda = load_cuda();
  // The HIP launch function as a framework that dlsyms it gets it.
  using LaunchKernel = hipError_t (*)(const void*, dim3, dim3, void**, size_t, hipStream_t);
  const auto launch_kernel =
      reinterpret_cast<LaunchKernel>(dlsym(dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_NOLOAD), "hipLaunchKernel"));
  if (launch_kernel == nullptr) {
    std::fprintf(stderr, "mixed_vendors: no hipLaunchKernel through dlsym\n");
    return 3;
  }
  int cuda_devices = 0;
  CHECK_CUDA(cuda.get_device_count(&cuda_devices));

  unsigned char* amd = nullptr;
  void* nvidia = nullptr;
  CHECK_HIP(hipMalloc(&amd, kBytes));
  CHECK_CUDA(cuda.malloc(&nvidia, kBytes));
  for (int round = 0; round < rounds; ++round) {
    CHECK_HIP(hipMemcpy(amd, host.data(), kBytes, hipMemcpyHostToDevice));
    increment<<<kBytes / 256, 256>>>(amd, kBytes);
    CHECK_HIP(hipGetLastError());
    int count = kBytes;
    void* args[] = {&amd, &count};
    CHECK_HIP(launch_kernel(reinterpret_cast<const void*>(&increment), dim3(kBytes / 256), dim3(256), args, 0, nullptr));
    CHECK_HIP(hipMemcpy(back.data(), amd, kBytes, hipMemcpyDeviceToHost));
    CHECK_CUDA(cuda.memset(nvidia, 0, kBytes));
    CHECK_CUDA(cuda.memcpy(nvidia, host.data(), kBytes, kCudaMemcpyHostToDevice));
    CHECK_CUDA(cuda.memcpy(back.data(), nvidia, kBytes, kCudaMemcpyDeviceToHost));
    if (std::memcmp(back.data(), host.data(), kBytes) != 0) {
      std::fprintf(stderr, "mixed_vendors: CUDA round trip changed the bytes\n");
      return 5;
    }
  }
  CHECK_CUDA(cuda.device_synchronize());
  CHECK_HIP(hipDeviceSynchronize());
  CHECK_CUDA(cuda.free(nvidia));
  CHECK_HIP(hipFree(amd));
  hipDeviceProp_t props;
  CHECK_HIP(hipGetDeviceProperties(&props, 0));
  std::printf("mixed_vendors: %d rounds on %s and %d CUDA device(s) ok\n", rounds, props.gcnArchName, cuda_devices);
  return 0;
}
