#include "preload/cuda/gpu_timing_select.h"

#include "formats/records.h"
#include "preload/cuda/cupti/gpu_timing_cupti.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/gpu_timing_events.h"

namespace proflaunch::cuda {

void select_gpu_timing(GpuTiming timing) noexcept {
  switch (timing) {
    case GpuTiming::kNone:
      use_gpu_timing_backend(nullptr);
      return;
    case GpuTiming::kEvents: {
      GpuTimingBackend* events = event_timing_backend();
      if (events != nullptr) note_events_requested();
      use_gpu_timing_backend(events);
      return;
    }
    case GpuTiming::kCupti:
    case GpuTiming::kAuto: {
      // Both fall back to events when CUPTI cannot be used (and say why).
      const auto request =
          timing == GpuTiming::kCupti ? format::GpuTimingRequest::kCupti : format::GpuTimingRequest::kAuto;
      if (GpuTimingBackend* cupti = cupti_timing_backend(request))
        // CUPTI records no host function: events time those.
        use_gpu_timing_backends(cupti, event_timing_backend());
      else
        use_gpu_timing_backend(event_timing_backend());
      return;
    }
  }
}

}  // namespace proflaunch::cuda
