// The private entry points nvcc's generated host code calls: registration
// from static constructors (__cudaRegister*), and the pieces of a <<<>>>
// launch (__cudaPushCallConfiguration, __cudaGetKernel,
// __cudaPopCallConfiguration, __cudaLaunchKernel[_ptsz]).
//
// Their declarations live in crt/host_runtime.h and crt/device_functions.h,
// which only compile under nvcc, so they are declared here with the same
// signatures (the nvcc test programs prove them).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "context.h"
#include "errors.h"
#include "launch.h"
#include "registry.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

namespace {

struct CallConfiguration {
  dim3 grid;
  dim3 block;
  std::size_t shared_memory_bytes;
  cudaStream_t stream;
};

// A stack, not a slot: a kernel argument expression may itself launch a
// kernel between the push and the pop of the outer launch.
std::vector<CallConfiguration>& call_configurations() {
  thread_local std::vector<CallConfiguration> stack;
  return stack;
}

}  // namespace

extern "C" {

void** __cudaRegisterFatBinary(void* fatCubin) { return register_fatbin(fatCubin); }

void __cudaRegisterFatBinaryEnd(void** fatCubinHandle) { end_fatbin_registration(fatCubinHandle); }

void __cudaUnregisterFatBinary(void** fatCubinHandle) { unregister_fatbin(fatCubinHandle); }

void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* /*deviceFun*/,
                            const char* deviceName, int /*thread_limit*/, uint3* /*tid*/,
                            uint3* /*bid*/, dim3* /*bDim*/, dim3* /*gDim*/, int* /*wSize*/) {
  register_function(fatCubinHandle, hostFun, deviceName);
}

void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* /*deviceAddress*/,
                       const char* deviceName, int /*ext*/, std::size_t size, int /*constant*/,
                       int /*global*/) {
  register_variable(fatCubinHandle, hostVar, deviceName, size, false, nullptr);
}

void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress,
                              char* /*deviceAddress*/, const char* deviceName, int /*ext*/,
                              std::size_t size, int /*constant*/, int /*global*/) {
  // The host code reaches a __managed__ variable through *hostVarPtrAddress,
  // so that address is also the symbol cudaMemcpyToSymbol receives.
  register_variable(fatCubinHandle, hostVarPtrAddress, deviceName, size, true, hostVarPtrAddress);
}

char __cudaInitModule(void** fatCubinHandle) {
  const DriverApi* api = nullptr;
  if (enter_with_context(DefaultStream::legacy, &api) != cudaSuccess) return 0;
  return initialize_module(api, fatCubinHandle) ? 1 : 0;
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, std::size_t sharedMem,
                                     struct CUstream_st* stream) {
  call_configurations().push_back(CallConfiguration{gridDim, blockDim, sharedMem, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, std::size_t* sharedMem,
                                       void* stream) {
  std::vector<CallConfiguration>& stack = call_configurations();
  if (stack.empty()) return finish(cudaErrorMissingConfiguration);
  const CallConfiguration& top = stack.back();
  *gridDim = top.grid;
  *blockDim = top.block;
  *sharedMem = top.shared_memory_bytes;
  *static_cast<cudaStream_t*>(stream) = top.stream;
  stack.pop_back();
  return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUkernel found = nullptr;
  if (cudaError_t error = kernel_for(api, hostFun, &found)) return finish(error);
  *kernel = reinterpret_cast<cudaKernel_t>(found);
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               std::size_t sharedMem, cudaStream_t stream) {
  LaunchRequest request{gridDim, blockDim, args, sharedMem, stream};
  return traced("__cudaLaunchKernel",
                [&] { return launch_kernel(DefaultStream::legacy, reinterpret_cast<CUkernel>(kernel), request); });
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    std::size_t sharedMem, cudaStream_t stream) {
  LaunchRequest request{gridDim, blockDim, args, sharedMem, stream};
  return traced("__cudaLaunchKernel_ptsz",
                [&] { return launch_kernel(DefaultStream::per_thread, reinterpret_cast<CUkernel>(kernel), request); });
}

}  // extern "C"
