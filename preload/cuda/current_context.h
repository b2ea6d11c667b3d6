// Which context and device the calling thread's CUDA calls run on.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace proflaunch::cuda {

// The device of the calling thread's current context, and the context; -1 /
// nullptr when there is none.
//
// Cached per thread, because asking the driver (cuCtxGetCurrent, and
// cuCtxGetDevice when it changed) on every launch was a third of a launch
// hook's cost. The cache stays right because every driver entry point is
// wrapped: the calls that change a thread's current context (cuCtxSetCurrent,
// Push/Pop, cuCtxCreate, the runtime's cudaSetDevice through them) forget
// it on their thread, and any context destruction (cuCtxDestroy, a primary
// context released or reset) forgets it on every thread. A change made
// through a path the shim cannot see (a private interface of NVIDIA's own
// libraries) is caught by asking the driver again every
// kContextRevalidatePeriod calls, and at once when the GPU timing finds the
// context wrong.
int current_device(CUcontext* context) noexcept;

inline constexpr uint32_t kContextRevalidatePeriod = 256;

// The calling thread's current context may have changed.
void forget_current_context() noexcept;
// Some context was destroyed: every thread asks the driver again.
void forget_all_current_contexts() noexcept;

}  // namespace proflaunch::cuda
