// Runtime launch and registration entry points. They record nothing of their
// own when the launch reaches the driver (the driver hook records it under
// the runtime API's name); they contribute the kernel's device name from
// registration, for handles the driver cannot name.
#include <cuda_runtime_api.h>

#include "preload/cuda/function_names.h"
#include "preload/cuda/hook_registry.h"
#include "preload/cuda/runtime_call.h"

// The nvcc host-stub ABI (platform-facts.md) and the per-thread variants the
// headers only declare under --default-stream per-thread.
extern "C" {
void __cudaRegisterFunction(void** fatbin, const char* host_function, char* device_function,
                            const char* device_name, int thread_limit, uint3* tid, uint3* bid,
                            dim3* block, dim3* grid, int* warp_size);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_function);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared,
                               cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args,
                                    size_t shared, cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void* function, dim3 grid, dim3 block, void** args,
                                  size_t shared, cudaStream_t stream);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* function, void** args);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* function, dim3 grid, dim3 block, void** args,
                                             size_t shared, cudaStream_t stream);
}

namespace proflaunch::cuda {
namespace {

void* real___cudaRegisterFunction;
void* real___cudaGetKernel;
void* real___cudaLaunchKernel;
void* real___cudaLaunchKernel_ptsz;
void* real_cudaLaunchKernel;
void* real_cudaLaunchKernel_ptsz;
void* real_cudaLaunchKernelExC;
void* real_cudaLaunchKernelExC_ptsz;
void* real_cudaLaunchCooperativeKernel;
void* real_cudaLaunchCooperativeKernel_ptsz;

constexpr uint16_t kLaunchFlags = format::kApiAsync;
constexpr uint16_t kLaunchFlagsPerThread = format::kApiAsync | format::kApiPerThreadStream;

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

PROFLAUNCH_EXPORT void __cudaRegisterFunction(void** fatbin, const char* host_function,
                                              char* device_function, const char* device_name,
                                              int thread_limit, uint3* tid, uint3* bid, dim3* block,
                                              dim3* grid, int* warp_size) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(__cudaRegisterFunction, kRuntimeLibrary);
  // Registration runs from static constructors, possibly before the shim
  // records; remembering the name is harmless either way.
  if (!proflaunch::inside_profiler()) remember_host_stub(host_function, device_name);
  if (real != nullptr)
    real(fatbin, host_function, device_function, device_name, thread_limit, tid, bid, block, grid, warp_size);
}

PROFLAUNCH_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* host_function) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(__cudaGetKernel, kRuntimeLibrary);
  if (real == nullptr) return cudaErrorInitializationError;
  const cudaError_t result = real(kernel, host_function);
  if (result == cudaSuccess && kernel != nullptr && !proflaunch::inside_profiler())
    remember_runtime_kernel(*kernel, host_function);
  return result;
}

// clang-format off
PROFLAUNCH_RUNTIME_HOOK(__cudaLaunchKernel, cudaLaunchKernel, kLaunch, kLaunchFlags, kernel,
  (cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream),
  (kernel, grid, block, args, shared, stream))
PROFLAUNCH_RUNTIME_HOOK(__cudaLaunchKernel_ptsz, cudaLaunchKernel, kLaunch, kLaunchFlagsPerThread, kernel,
  (cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream),
  (kernel, grid, block, args, shared, stream))
PROFLAUNCH_RUNTIME_HOOK(cudaLaunchKernel, cudaLaunchKernel, kLaunch, kLaunchFlags, function,
  (const void* function, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream),
  (function, grid, block, args, shared, stream))
PROFLAUNCH_RUNTIME_HOOK(cudaLaunchKernel_ptsz, cudaLaunchKernel, kLaunch, kLaunchFlagsPerThread, function,
  (const void* function, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream),
  (function, grid, block, args, shared, stream))
PROFLAUNCH_RUNTIME_HOOK(cudaLaunchKernelExC, cudaLaunchKernelExC, kLaunch, kLaunchFlags, function,
  (const cudaLaunchConfig_t* config, const void* function, void** args), (config, function, args))
PROFLAUNCH_RUNTIME_HOOK(cudaLaunchKernelExC_ptsz, cudaLaunchKernelExC, kLaunch, kLaunchFlagsPerThread, function,
  (const cudaLaunchConfig_t* config, const void* function, void** args), (config, function, args))
PROFLAUNCH_RUNTIME_HOOK(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel, kLaunch, kLaunchFlags, function,
  (const void* function, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream),
  (function, grid, block, args, shared, stream))
PROFLAUNCH_RUNTIME_HOOK(cudaLaunchCooperativeKernel_ptsz, cudaLaunchCooperativeKernel, kLaunch,
  kLaunchFlagsPerThread, function,
  (const void* function, dim3 grid, dim3 block, void** args, size_t shared, cudaStream_t stream),
  (function, grid, block, args, shared, stream))
// clang-format on

}  // extern "C"

namespace proflaunch::cuda {

HookFamily runtime_launch_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(__cudaRegisterFunction, nullptr, 0, false, kRuntimeLibrary, real___cudaRegisterFunction),
      PROFLAUNCH_HOOK(__cudaGetKernel, nullptr, 0, false, kRuntimeLibrary, real___cudaGetKernel),
      PROFLAUNCH_HOOK(__cudaLaunchKernel, nullptr, 0, false, kRuntimeLibrary, real___cudaLaunchKernel),
      PROFLAUNCH_HOOK(__cudaLaunchKernel_ptsz, nullptr, 0, true, kRuntimeLibrary, real___cudaLaunchKernel_ptsz),
      PROFLAUNCH_HOOK(cudaLaunchKernel, nullptr, 0, false, kRuntimeLibrary, real_cudaLaunchKernel),
      PROFLAUNCH_HOOK(cudaLaunchKernel_ptsz, nullptr, 0, true, kRuntimeLibrary, real_cudaLaunchKernel_ptsz),
      PROFLAUNCH_HOOK(cudaLaunchKernelExC, nullptr, 0, false, kRuntimeLibrary, real_cudaLaunchKernelExC),
      PROFLAUNCH_HOOK(cudaLaunchKernelExC_ptsz, nullptr, 0, true, kRuntimeLibrary, real_cudaLaunchKernelExC_ptsz),
      PROFLAUNCH_HOOK(cudaLaunchCooperativeKernel, nullptr, 0, false, kRuntimeLibrary, real_cudaLaunchCooperativeKernel),
      PROFLAUNCH_HOOK(cudaLaunchCooperativeKernel_ptsz, nullptr, 0, true, kRuntimeLibrary, real_cudaLaunchCooperativeKernel_ptsz),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
