// The driver functions the simulated NCCL uses, obtained as the real library
// obtains them: dlopen("libcuda.so.1") and cuGetProcAddress_v2 for each.
// Nothing here links libcuda or libcudart.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

namespace simnccl {

struct Driver {
  PFN_cuInit_v2000 init;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDeviceGetCount_v2000 device_get_count;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current;
  PFN_cuCtxGetDevice_v13000 ctx_get_device;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain;
  PFN_cuLibraryLoadData_v12000 library_load_data;
  PFN_cuLibraryGetKernel_v12000 library_get_kernel;
  PFN_cuKernelGetFunction_v12000 kernel_get_function;
  PFN_cuLaunchKernel_v4000 launch_kernel;
  PFN_cuLaunchHostFunc_v10000 launch_host_func;
};

// Fills `driver`, or sets `error`: driver_cuda.cpp (libnccl.so.2: the CUDA
// driver) or driver_hip.cpp (librccl.so.1: the same functions over HIP).
void load_driver(Driver& driver, std::string& error);

// Null (and `error` set) when libcuda.so.1 is missing or incomplete.
const Driver* driver(std::string& error);

// The current context and its device; with no current context, the primary
// context of `fallback_device`, made current.
CUresult current_or_primary_context(const Driver& d, int fallback_device, CUcontext* context, int* device);

// The CUfunction for the kernel `name` (unmangled, e.g.
// "ncclDevKernel_AllReduce_Sum_f32_RING_LL") in the current context.
CUresult kernel_function(const Driver& d, CUcontext context, const std::string& name, CUfunction* function);

}  // namespace simnccl
