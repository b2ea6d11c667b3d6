// The events timing backend: a pair of driver events recorded around each
// operation on its own stream, resolved to host time on the writer thread.
#pragma once

#include "preload/cuda/gpu_timing.h"

namespace proflaunch::cuda {

// The backend, set up (its writer task registered); null if it cannot work.
GpuTimingBackend* event_timing_backend() noexcept;

// --gpu-timing=events chose this backend: the trace says so (a GpuTimingInfo
// record, written by the writer's next pass), as it does for CUPTI.
void note_events_requested() noexcept;

}  // namespace proflaunch::cuda
