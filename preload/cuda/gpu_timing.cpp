#include "preload/cuda/gpu_timing.h"

#include "preload/cuda/gpu_timing_events.h"

namespace proflaunch::cuda {
namespace {

// --gpu-timing=none: launches are recorded, their GPU time is not.
class NoGpuTiming final : public GpuTimingBackend {
 public:
  TimingToken before(CUstream, CUcontext) noexcept override { return {}; }
  void after(const TimingToken&, CUstream, const GpuOperation&, bool) noexcept override {}
  void before_context_teardown(CUcontext) noexcept override {}
  void after_context_teardown(CUcontext, bool) noexcept override {}
};

NoGpuTiming g_none;
GpuTimingBackend* g_backend = &g_none;

}  // namespace

GpuTimingBackend& gpu_timing() noexcept { return *g_backend; }

void select_gpu_timing(bool events) noexcept {
  GpuTimingBackend* chosen = &g_none;
  if (events) {
    if (GpuTimingBackend* backend = event_timing_backend()) chosen = backend;
  }
  g_backend = chosen;
}

}  // namespace proflaunch::cuda
