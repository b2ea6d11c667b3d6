#include "launch.h"

#include <cstddef>

#include "context.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "registry.h"
#include "tools_trace.h"

namespace simgpu_runtime {
namespace {

// cudaLaunchAttribute and CUlaunchAttribute (and their configs) are the same
// structure by design; the runtime hands the attribute array through as is.
static_assert(sizeof(cudaLaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(offsetof(cudaLaunchAttribute, val) == offsetof(CUlaunchAttribute, value));
static_assert(static_cast<int>(cudaLaunchAttributeCooperative) ==
              static_cast<int>(CU_LAUNCH_ATTRIBUTE_COOPERATIVE));

bool has_empty_dimension(const dim3& dims) { return dims.x == 0 || dims.y == 0 || dims.z == 0; }

// The driver answers a bad launch shape with CUDA_ERROR_INVALID_VALUE; the
// runtime reports it as the configuration error programs check for.
cudaError_t launch_error_from(CUresult result) {
  return result == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidConfiguration
                                            : runtime_error_from(result);
}

cudaError_t launch_function(DefaultStream mode, const void* function,
                            const LaunchRequest& request) {
  // Finding the kernel needs only the driver; launch_kernel enters the context.
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(mode, &api)) return finish(error);
  CUkernel kernel = nullptr;
  if (cudaError_t error = kernel_for(api, function, &kernel)) return finish(error);
  return launch_kernel(mode, kernel, request);
}

cudaError_t launch_ex(DefaultStream mode, const cudaLaunchConfig_t* config, const void* function,
                      void** args) {
  if (config == nullptr) return finish(cudaErrorInvalidValue);
  if (has_empty_dimension(config->gridDim) || has_empty_dimension(config->blockDim)) {
    return finish(cudaErrorInvalidConfiguration);
  }
  const DriverApi* api = nullptr;
  CUfunction resolved = nullptr;
  if (cudaError_t error = resolve_function(mode, function, &api, &resolved)) return finish(error);
  CUlaunchConfig driver_config{};
  driver_config.gridDimX = config->gridDim.x;
  driver_config.gridDimY = config->gridDim.y;
  driver_config.gridDimZ = config->gridDim.z;
  driver_config.blockDimX = config->blockDim.x;
  driver_config.blockDimY = config->blockDim.y;
  driver_config.blockDimZ = config->blockDim.z;
  driver_config.sharedMemBytes = static_cast<unsigned int>(config->dynamicSmemBytes);
  driver_config.hStream = config->stream;
  driver_config.attrs = reinterpret_cast<CUlaunchAttribute*>(config->attrs);
  driver_config.numAttrs = config->numAttrs;
  return finish(launch_error_from(api->cuLaunchKernelEx(&driver_config, resolved, args, nullptr)));
}

cudaError_t launch_cooperative(DefaultStream mode, const void* function,
                               const LaunchRequest& request) {
  if (has_empty_dimension(request.grid) || has_empty_dimension(request.block)) {
    return finish(cudaErrorInvalidConfiguration);
  }
  const DriverApi* api = nullptr;
  CUfunction resolved = nullptr;
  if (cudaError_t error = resolve_function(mode, function, &api, &resolved)) return finish(error);
  CUresult result = api->cuLaunchCooperativeKernel(
      resolved, request.grid.x, request.grid.y, request.grid.z, request.block.x, request.block.y,
      request.block.z, static_cast<unsigned int>(request.shared_memory_bytes), request.stream,
      request.args);
  return finish(launch_error_from(result));
}

}  // namespace

cudaError_t resolve_function(DefaultStream mode, const void* function, const DriverApi** api,
                             CUfunction* resolved) {
  if (cudaError_t error = enter_with_context(mode, api)) return error;
  CUkernel kernel = nullptr;
  if (cudaError_t error = kernel_for(*api, function, &kernel)) return error;
  return function_for(*api, kernel, resolved);
}

cudaError_t launch_kernel(DefaultStream mode, CUkernel kernel, const LaunchRequest& request) {
  if (kernel == nullptr) return finish(cudaErrorInvalidDeviceFunction);
  if (has_empty_dimension(request.grid) || has_empty_dimension(request.block)) {
    return finish(cudaErrorInvalidConfiguration);
  }
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(mode, &api)) return finish(error);
  CUfunction function = nullptr;
  if (cudaError_t error = function_for(api, kernel, &function)) return finish(error);
  CUresult result = api->cuLaunchKernel(function, request.grid.x, request.grid.y, request.grid.z,
                                        request.block.x, request.block.y, request.block.z,
                                        static_cast<unsigned int>(request.shared_memory_bytes),
                                        request.stream, request.args, nullptr);
  return finish(launch_error_from(result));
}

}  // namespace simgpu_runtime

using namespace simgpu_runtime;

extern "C" {

cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                             size_t sharedMem, cudaStream_t stream) {
  return launch_function(DefaultStream::legacy, func,
                         LaunchRequest{gridDim, blockDim, args, sharedMem, stream});
}

cudaError_t cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                  size_t sharedMem, cudaStream_t stream) {
  return launch_function(DefaultStream::per_thread, func,
                         LaunchRequest{gridDim, blockDim, args, sharedMem, stream});
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  return traced("cudaLaunchKernelExC", [&] { return launch_ex(DefaultStream::legacy, config, func, args); });
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t* config, const void* func,
                                     void** args) {
  return traced("cudaLaunchKernelExC_ptsz", [&] { return launch_ex(DefaultStream::per_thread, config, func, args); });
}

cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                        size_t sharedMem, cudaStream_t stream) {
  return launch_cooperative(DefaultStream::legacy, func,
                            LaunchRequest{gridDim, blockDim, args, sharedMem, stream});
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim,
                                             void** args, size_t sharedMem, cudaStream_t stream) {
  return launch_cooperative(DefaultStream::per_thread, func,
                            LaunchRequest{gridDim, blockDim, args, sharedMem, stream});
}

}  // extern "C"
