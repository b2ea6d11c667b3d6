// Kernel names. The trace names a device function once (FunctionDef) and
// launches refer to it by handle. Names come from where the handle is born
// (cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction, which every
// loader - runtime, cuBLAS-like libraries, Triton - goes through), and, for a
// handle first seen at launch, from cuFuncGetName / cuKernelGetName or the
// host stub a runtime launch named.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace proflaunch::cuda {

// Hot path: a probe of a lock-free set; the cold path names the handle.
void ensure_function_named(uint64_t handle) noexcept;

// Whether a launched function is the kernel of --step-range=kernel:NAME
// (its name asked once per handle).
bool is_step_kernel(uint64_t handle) noexcept;

// cuKernelGetFunction: the function is named like its kernel.
void name_kernel_function(uint64_t function, CUkernel kernel) noexcept;

// Hot path for a host function queued on a stream (cuLaunchHostFunc): its
// address is named once, from the symbol table of the object holding it.
void ensure_host_function_named(uint64_t address) noexcept;

// Cold path: (re)names `handle` - a module or library load may reuse a
// handle of an unloaded one, so this always writes a definition.
void name_function(uint64_t handle, const char* name) noexcept;

// Runtime registration (__cudaRegisterFunction): the device name of a host
// stub, used when a launch's handle cannot be named through the driver.
void remember_host_stub(const void* host_function, const char* device_name) noexcept;
// After __cudaGetKernel: the runtime's kernel handle of a host stub.
void remember_runtime_kernel(const void* kernel, const void* host_function) noexcept;
// The device name remembered for a host stub or runtime kernel, or nullptr.
const char* host_stub_name(const void* host_function_or_kernel) noexcept;

}  // namespace proflaunch::cuda
