// What nvcc's host code registers before main (fatbins, host stub -> device
// function name, device variables) and the lazy loading behind it.
//
// Registration never touches the driver: it runs in static constructors,
// before main, possibly before anything may initialize CUDA. A fatbin is
// loaded with cuLibraryLoadData the first time one of its kernels or
// variables is needed; a CUkernel (context-independent, and the same handle
// type as cudaKernel_t) is looked up by its mangled device name; a CUfunction
// for the current context comes from cuKernelGetFunction and is cached.
#pragma once

#include <cstddef>

#include "driver_api.h"

namespace simgpu_runtime {

void** register_fatbin(void* fatbin_wrapper);
void end_fatbin_registration(void** handle);
void unregister_fatbin(void** handle);
void register_function(void** handle, const void* host_stub, const char* device_name);
void register_variable(void** handle, const void* host_address, const char* device_name,
                       std::size_t bytes, bool managed, void** managed_host_pointer);

// `function` is a host stub registered by __cudaRegisterFunction or a
// cudaKernel_t this runtime handed out. Loads the fatbin on first use.
cudaError_t kernel_for(const DriverApi* api, const void* function, CUkernel* kernel);

// The kernel's CUfunction in the calling thread's current context.
cudaError_t function_for(const DriverApi* api, CUkernel kernel, CUfunction* function);

// Mangled device name of a registered host stub or handed-out kernel, or null.
const char* device_name_of(const void* function);

// Device address and size of a registered __device__/__constant__/__managed__
// variable, given its host shadow's address (cudaMemcpyToSymbol's `symbol`).
cudaError_t variable_address(const DriverApi* api, const void* host_address, CUdeviceptr* address,
                             std::size_t* bytes);

// __cudaInitModule: loads the fatbin and points every __managed__ variable's
// host pointer at its managed allocation. Returns false on failure.
bool initialize_module(const DriverApi* api, void** handle);

}  // namespace simgpu_runtime
