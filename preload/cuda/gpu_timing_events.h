// The events timing backend: a pair of driver events recorded around each
// operation on its own stream, resolved to host time on the writer thread.
#pragma once

#include "preload/cuda/gpu_timing.h"

namespace proflaunch::cuda {

// The backend, set up (its writer task registered); null if it cannot work.
GpuTimingBackend* event_timing_backend() noexcept;

}  // namespace proflaunch::cuda
