// GPU time from CUPTI's activity records (--gpu-timing=cupti, and auto when
// CUPTI can be used). Joined exactly to the hooked call through CUPTI
// correlation ids; sees each node of a graph launch; adds no driver call to
// the hot path. Starts at the first timed operation (or when a real driver
// calls InitializeInjection); falls back to events, saying why, when CUPTI
// is absent, refuses the subscription, or the program takes CUPTI for itself.
#pragma once

#include "formats/records.h"
#include "preload/cuda/gpu_timing.h"

namespace proflaunch::cuda {

// The backend (registers its writer task). Null if it cannot run at all.
GpuTimingBackend* cupti_timing_backend(format::GpuTimingRequest requested) noexcept;

// Starts CUPTI now if it is the backend in use and has not started.
void start_cupti_timing() noexcept;

// The program calls CUPTI itself (`what`: the entry point): the shim gives
// CUPTI up (flushes its records, disables what it enabled, unsubscribes) and
// times with events from now on. Returns once CUPTI is the program's.
bool cupti_yield_to_program(const char* what) noexcept;

}  // namespace proflaunch::cuda
