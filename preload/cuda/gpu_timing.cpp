#include "preload/cuda/gpu_timing.h"

#include "preload/cuda/cupti/gpu_timing_cupti.h"
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

constinit NoGpuTiming g_none;
GpuTimingBackend* g_backend = &g_none;
bool g_enabled = false;
bool g_vendor_records = false;  // the backend in use is CUPTI (no host-function records)

}  // namespace

GpuTimingBackend& gpu_timing() noexcept { return *g_backend; }

bool gpu_timing_enabled() noexcept { return g_enabled; }

void select_gpu_timing(GpuTiming timing) noexcept {
  GpuTimingBackend* chosen = &g_none;
  switch (timing) {
    case GpuTiming::kNone:
      break;
    case GpuTiming::kEvents:
      if (GpuTimingBackend* backend = event_timing_backend()) {
        chosen = backend;
        note_events_requested();
      }
      break;
    case GpuTiming::kCupti:
    case GpuTiming::kAuto: {
      // Both fall back to events when CUPTI cannot be used (and say why).
      const auto request = timing == GpuTiming::kCupti ? format::GpuTimingRequest::kCupti : format::GpuTimingRequest::kAuto;
      if (GpuTimingBackend* backend = cupti_timing_backend(request))
        chosen = backend;
      else if (GpuTimingBackend* events = event_timing_backend())
        chosen = events;
      break;
    }
  }
  g_backend = chosen;
  g_enabled = chosen != &g_none;
  g_vendor_records = chosen != &g_none && chosen != event_timing_backend();
}

GpuTimingBackend& gpu_timing_for_host_work() noexcept {
  GpuTimingBackend* backend = __atomic_load_n(&g_backend, __ATOMIC_ACQUIRE);
  if (__atomic_load_n(&g_vendor_records, __ATOMIC_ACQUIRE)) {
    if (GpuTimingBackend* events = event_timing_backend()) return *events;
  }
  return *backend;
}

bool gpu_timing_backend_is(const GpuTimingBackend* backend) noexcept { return g_backend == backend; }

void use_gpu_timing_backend(GpuTimingBackend* backend) noexcept {
  __atomic_store_n(&g_vendor_records, false, __ATOMIC_RELEASE);
  __atomic_store_n(&g_backend, backend != nullptr ? backend : &g_none, __ATOMIC_RELEASE);
  __atomic_store_n(&g_enabled, backend != nullptr, __ATOMIC_RELEASE);
}

}  // namespace proflaunch::cuda
