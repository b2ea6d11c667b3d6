// Where the CPU waits for the GPU: context, stream and event
// synchronization (the span is the wait), and cuStreamWaitEvent, a GPU-side
// wait recorded for the dependencies it creates.
#include <cuda.h>

#include "preload/cuda/api_call.h"
#include "preload/cuda/driver_services.h"
#include "preload/cuda/hook_registry.h"
#include "preload/cuda/recording.h"
#include "preload/stacks/stacks.h"

extern "C" {
CUresult cuStreamSynchronize_ptsz(CUstream);
CUresult cuStreamWaitEvent_ptsz(CUstream, CUevent, unsigned int);
}

namespace proflaunch::cuda {
namespace {

void* real_cuCtxSynchronize;
void* real_cuCtxSynchronize_v2;
void* real_cuStreamSynchronize;
void* real_cuStreamSynchronize_ptsz;
void* real_cuEventSynchronize;
void* real_cuStreamWaitEvent;
void* real_cuStreamWaitEvent_ptsz;

struct SyncShape {
  format::SyncTarget target;
  uint64_t stream;
  uint64_t event;
};

template <typename CallReal>
CUresult traced_sync(Api api, bool per_thread, const SyncShape& shape, CUcontext explicit_context,
                     CallReal&& call_real) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !cuda_domain_recording()) return call_real();
  CUcontext context = nullptr;
  const int device = current_device(&context);
  if (explicit_context != nullptr) context = explicit_context;
  DriverCall call(api, Operation::kSync, variant_flags(per_thread, false));
  const CUresult result = call_real();
  if (auto* record = emit<format::SynchronizeRecord>()) {
    call.finish(record->span, result);
    record->device = device;
    record->stream = shape.stream;
    record->event = shape.event;
    record->context = reinterpret_cast<uint64_t>(context);
    record->target = static_cast<uint8_t>(shape.target);
    const uint64_t correlation = record->span.correlation_id;
    commit();
    stacks::attach_stacks(correlation, format::StackPoint::kSync);
  }
  return result;
}

CUresult stream_synchronize(bool pt, CUstream stream) {
  auto* real = pt ? PROFLAUNCH_REAL(cuStreamSynchronize_ptsz, kDriverLibrary)
                  : PROFLAUNCH_REAL(cuStreamSynchronize, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_sync(Api::cuStreamSynchronize, pt,
                     {format::SyncTarget::kStream, stream_handle(stream, pt), 0}, nullptr,
                     [&] { return real(stream); });
}

CUresult stream_wait_event(bool pt, CUstream stream, CUevent event, unsigned int flags) {
  auto* real = pt ? PROFLAUNCH_REAL(cuStreamWaitEvent_ptsz, kDriverLibrary)
                  : PROFLAUNCH_REAL(cuStreamWaitEvent, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_sync(Api::cuStreamWaitEvent, pt,
                     {format::SyncTarget::kStreamWaitEvent, stream_handle(stream, pt),
                      reinterpret_cast<uint64_t>(event)},
                     nullptr, [&] { return real(stream, event, flags); });
}

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;
using pc::Api;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuCtxSynchronize() {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuCtxSynchronize, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_sync(Api::cuCtxSynchronize, false, {proflaunch::format::SyncTarget::kDevice, 0, 0}, nullptr,
                     [&] { return real(); });
}

PROFLAUNCH_EXPORT CUresult cuCtxSynchronize_v2(CUcontext context) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuCtxSynchronize_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_sync(Api::cuCtxSynchronize, false, {proflaunch::format::SyncTarget::kDevice, 0, 0}, context,
                     [&] { return real(context); });
}

PROFLAUNCH_EXPORT CUresult cuStreamSynchronize(CUstream stream) { return pc::stream_synchronize(false, stream); }
PROFLAUNCH_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) { return pc::stream_synchronize(true, stream); }

PROFLAUNCH_EXPORT CUresult cuEventSynchronize(CUevent event) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuEventSynchronize, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_sync(Api::cuEventSynchronize, false,
                     {proflaunch::format::SyncTarget::kEvent, 0, reinterpret_cast<uint64_t>(event)}, nullptr,
                     [&] { return real(event); });
}

PROFLAUNCH_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int f) { return pc::stream_wait_event(false, s, e, f); }
PROFLAUNCH_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned int f) { return pc::stream_wait_event(true, s, e, f); }

}  // extern "C"

namespace proflaunch::cuda {

HookFamily sync_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuCtxSynchronize, "cuCtxSynchronize", 2000, false, kDriverLibrary, real_cuCtxSynchronize),
      PROFLAUNCH_HOOK(cuCtxSynchronize_v2, "cuCtxSynchronize", 13000, false, kDriverLibrary, real_cuCtxSynchronize_v2),
      PROFLAUNCH_HOOK(cuStreamSynchronize, "cuStreamSynchronize", 2000, false, kDriverLibrary, real_cuStreamSynchronize),
      PROFLAUNCH_HOOK(cuStreamSynchronize_ptsz, "cuStreamSynchronize", 7000, true, kDriverLibrary, real_cuStreamSynchronize_ptsz),
      PROFLAUNCH_HOOK(cuEventSynchronize, "cuEventSynchronize", 2000, false, kDriverLibrary, real_cuEventSynchronize),
      PROFLAUNCH_HOOK(cuStreamWaitEvent, "cuStreamWaitEvent", 3020, false, kDriverLibrary, real_cuStreamWaitEvent),
      PROFLAUNCH_HOOK(cuStreamWaitEvent_ptsz, "cuStreamWaitEvent", 7000, true, kDriverLibrary, real_cuStreamWaitEvent_ptsz),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
