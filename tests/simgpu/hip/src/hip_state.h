// The simulated HIP runtime (libamdhip64.so.5): a HIP front end on the
// simulator's device engine. The engine is the simulated CUDA driver's
// (streams on worker threads, the time model, memory, events, capture),
// linked into this library privately: its cu* functions are local here
// (version script), so a program that loads both libcuda and libamdhip64 has
// two independent machines, and nothing that interposes cu* sees HIP work.
//
// This file: initialization, the calling thread's device, HIP's error
// numbers and the thread's last error.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "preload/hip/hip_private_abi.h"

namespace simhip {

// HIP's numbers are the CUDA driver's for every error both have
// (hip_runtime_api.h); a driver error HIP has no number for is hipErrorUnknown.
hipError_t to_hip(CUresult result) noexcept;
const char* error_name(hipError_t error) noexcept;

// What the device engine was initialized with, read once: the AMD target of
// every device (SIMGPU_HIP_ARCH, default gfx90a:sramecc+:xnack-), its name,
// and the host time the runtime takes to load a program's code object for a
// device at its first kernel launch there (SIMGPU_HIP_CODE_OBJECT_LOAD_NS,
// default 0; the real runtime spends milliseconds in it).
struct Machine {
  int device_count = 0;
  std::string arch = "gfx90a:sramecc+:xnack-";
  std::string name = "AMD Instinct MI210 (simulated)";
  int64_t code_object_load_ns = 0;
};
const Machine& machine() noexcept;

// Initializes the engine once (HIP needs no hipInit): hipSuccess, or the
// error every call returns (no device, a malformed SIMGPU_* variable).
hipError_t initialize() noexcept;

// Makes the calling thread's device current in the engine (its primary
// context, retained on first use): every call that touches a device does this.
hipError_t enter_device() noexcept;
int current_device() noexcept;
hipError_t set_current_device(int device) noexcept;
CUcontext primary_context(int device) noexcept;  // null before enter_device succeeded once for it

// Records a failed call's error as the thread's last error (hipGetLastError).
void set_last_error(hipError_t error) noexcept;
hipError_t take_last_error() noexcept;
hipError_t peek_last_error() noexcept;

// Every exported function runs its body through this: no exception crosses
// the C ABI, and a failure becomes the thread's last error.
template <class Body>
hipError_t api(Body&& body) noexcept {
  hipError_t result;
  try {
    result = body();
  } catch (const std::bad_alloc&) {
    result = hipErrorOutOfMemory;
  } catch (...) {
    result = hipErrorUnknown;
  }
  if (result != hipSuccess && result != hipErrorNotReady) set_last_error(result);
  return result;
}

// The same for calls on the current device.
template <class Body>
hipError_t device_api(Body&& body) noexcept {
  return api([&]() -> hipError_t {
    if (hipError_t entered = enter_device(); entered != hipSuccess) return entered;
    return body();
  });
}

// launch.cpp: a registered kernel's name, and a registered __device__
// variable's address on the current device (hipErrorInvalidSymbol if none).
const char* registered_kernel_name(const void* host_function);
hipError_t symbol_address(const void* symbol, CUdeviceptr* address, size_t* bytes);
// The engine function of a registered kernel on the current device (loading
// its code object there first): hipErrorInvalidDeviceFunction if unknown.
hipError_t registered_function(const void* host_function, CUfunction* function);

// functions.cpp: what a loaded code object's metadata says of its kernels,
// kept per engine function of `module` (kernel_metadata.h).
struct KernelResources;
void remember_kernel_resources(CUmodule module, const std::vector<KernelResources>& kernels);

inline CUstream cu(hipStream_t stream) noexcept { return reinterpret_cast<CUstream>(stream); }
inline CUevent cu(hipEvent_t event) noexcept { return reinterpret_cast<CUevent>(event); }
inline CUfunction cu(hipFunction_t function) noexcept { return reinterpret_cast<CUfunction>(function); }

}  // namespace simhip
