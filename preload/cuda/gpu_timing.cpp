#include "preload/cuda/gpu_timing.h"

#include "preload/cuda/gpu_timing_events.h"

namespace proflaunch::cuda {
namespace {

// --gpu-timing=none: operations are recorded, their GPU time is not.
class NoGpuTiming final : public GpuTimingBackend {
 public:
  TimingToken before(CUstream, CUcontext, Submission, bool) noexcept override { return {}; }
  void returned(TimingToken&, CUstream, bool) noexcept override {}
  void queue(const TimingToken&, const GpuOperation&) noexcept override {}
  void release(const TimingToken&) noexcept override {}
  void* lock_submissions(CUcontext, CUstream) noexcept override { return nullptr; }
  void unlock_submissions(void*) noexcept override {}
  void before_context_teardown(CUcontext) noexcept override {}
  void after_context_teardown(CUcontext, bool) noexcept override {}
};

NoGpuTiming g_none;
GpuTimingBackend* g_backend = &g_none;
bool g_enabled = false;

}  // namespace

GpuTimingBackend& gpu_timing() noexcept { return *g_backend; }

bool gpu_timing_enabled() noexcept { return g_enabled; }

void select_gpu_timing(bool events) noexcept {
  GpuTimingBackend* chosen = &g_none;
  if (events) {
    if (GpuTimingBackend* backend = event_timing_backend()) chosen = backend;
  }
  g_backend = chosen;
  g_enabled = chosen != &g_none;
}

void use_gpu_timing_backend(GpuTimingBackend* backend) noexcept {
  g_backend = backend != nullptr ? backend : &g_none;
  g_enabled = backend != nullptr;
}

}  // namespace proflaunch::cuda
