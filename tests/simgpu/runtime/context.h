// Devices and contexts as the runtime sees them: each thread has a selected
// device (0 until cudaSetDevice), and the runtime works in the primary context
// of that device, which it retains and makes current lazily, on the first call
// of that thread that needs one. A context the program made current through
// the driver API is used as is, like the real runtime does.
#pragma once

#include <cstdint>

#include "driver_api.h"
#include "errors.h"

namespace simgpu_runtime {

// Loads the driver; no context is created. Entry points that only query the
// driver (device count, attributes, versions) start here.
cudaError_t enter(DefaultStream mode, const DriverApi** api);

// Loads the driver and makes sure the calling thread has a current context.
cudaError_t enter_with_context(DefaultStream mode, const DriverApi** api);

// The shape of most entry points: enter the current context with the table
// of `mode`, make one driver call, record and return its error.
template <typename DriverCall>
cudaError_t with_context(DefaultStream mode, DriverCall&& driver_call) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(mode, &api)) return finish(error);
  return finish(driver_call(*api));
}

// The device of the calling thread's current context, else its selected one.
cudaError_t current_device(const DriverApi* api, int* device);

// cudaSetDevice: selects `device` for the calling thread and makes its primary
// context current (CUDA 12+ initializes the context here, not later).
cudaError_t select_device(const DriverApi* api, int device);

// The primary context of `device`, retained once per process on first use.
cudaError_t primary_context(const DriverApi* api, int device, CUcontext* context);

// cudaDeviceReset for the current device: resets its primary context. Every
// thread rebinds on its next call, and cached per-context handles expire.
cudaError_t reset_current_device(const DriverApi* api);

// Changes whenever a primary context is reset; per-context caches (CUfunction
// handles) store the generation they were filled in.
std::uint64_t context_generation();

}  // namespace simgpu_runtime
