// The driver functions libsimblas uses, resolved the way cuBLAS resolves
// them: dlopen("libcuda.so.1"), dlsym("cuGetProcAddress_v2"), then one
// cuGetProcAddress_v2 call per entry point with the CUDA version the library
// was built for. Nothing here is linked against libcuda.
#ifndef SIMBLAS_DRIVER_ENTRY_POINTS_H
#define SIMBLAS_DRIVER_ENTRY_POINTS_H

#include <cuda.h>
#include <cudaTypedefs.h>

namespace simblas {

struct DriverEntryPoints {
  PFN_cuInit_v2000 init;
  PFN_cuDeviceGet_v2000 device_get;
  PFN_cuDeviceGetAttribute_v2000 device_get_attribute;
  PFN_cuCtxGetCurrent_v4000 ctx_get_current;
  PFN_cuCtxSetCurrent_v4000 ctx_set_current;
  // CUDA 13 ABI: cuCtxGetDevice(device, ctx), ctx null = current context.
  PFN_cuCtxGetDevice_v13000 ctx_get_device;
  PFN_cuDevicePrimaryCtxRetain_v7000 primary_ctx_retain;
  PFN_cuLibraryLoadData_v12000 library_load_data;
  PFN_cuLibraryGetKernel_v12000 library_get_kernel;
  PFN_cuKernelGetFunction_v12000 kernel_get_function;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuLaunchKernel_v4000 launch_kernel;
};

// Resolves all entry points once per process (thread-safe). Returns null if
// libcuda.so.1 cannot be loaded or lacks one of them; *error then says why.
const DriverEntryPoints* driver_entry_points(const char** error);

}  // namespace simblas

#endif
