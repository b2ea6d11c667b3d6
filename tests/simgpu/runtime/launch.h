// Kernel launches, shared by nvcc's __cudaLaunchKernel and the public
// cudaLaunchKernel family.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "driver_api.h"

namespace simgpu_runtime {

struct LaunchRequest {
  dim3 grid;
  dim3 block;
  void** args;
  std::size_t shared_memory_bytes;
  cudaStream_t stream;
};

// Launches `kernel` in the calling thread's current context through
// cuLaunchKernel of the table `mode` selects (cuLaunchKernel_ptsz for the
// per-thread entry points). Records the error like every entry point.
cudaError_t launch_kernel(DefaultStream mode, CUkernel kernel, const LaunchRequest& request);

// Enters the current context and finds the CUfunction of `function` (a host
// stub or a cudaKernel_t) in it. Does not record errors.
cudaError_t resolve_function(DefaultStream mode, const void* function, const DriverApi** api,
                             CUfunction* resolved);

}  // namespace simgpu_runtime
