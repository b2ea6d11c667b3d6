// Where the CPU waits for the GPU: context, stream and event synchronization
// (the span is the wait), and cuStreamWaitEvent, a GPU-side wait recorded
// for the dependencies it creates.
#pragma once

#include "preload/cuda/current_context.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

struct SyncRow {
  format::SyncTarget target;
  CUstream stream = nullptr;  // as passed (normalized with the variant in run())
  bool has_stream = false;
  uint64_t event = 0;
  CUcontext context = nullptr;  // cuCtxSynchronize_v2's explicit context

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !cuda_domain_recording()) return call_real();
    const SyncRow row = describe();
    CUcontext context = nullptr;
    const int device = current_device(&context);
    if (row.context != nullptr) context = row.context;
    DriverCall call(Hook::api, Operation::kSync, variant_flags(Hook::per_thread, false));
    // A wait queued on a stream delays what follows it: it must not land
    // inside another thread's timed operation (gpu_timing_events.cpp).
    GpuTimingBackend& timing = gpu_timing();  // the lock goes back to the backend that gave it
    void* lock = row.target == format::SyncTarget::kStreamWaitEvent && gpu_timing_enabled()
                     ? timing.lock_submissions(context, effective_stream(row.stream, Hook::per_thread))
                     : nullptr;
    const CUresult result = call_real();
    call.returned();
    if (lock != nullptr) timing.unlock_submissions(lock);
    if (auto* record = emit<format::SynchronizeRecord>()) {
      call.finish(record->span, result);
      record->device = device;
      record->stream = row.has_stream ? stream_handle(row.stream, Hook::per_thread) : 0;
      record->event = row.event;
      record->context = reinterpret_cast<uint64_t>(context);
      record->target = static_cast<uint8_t>(row.target);
      commit();
      stacks::attach_stacks(call.correlation(), format::StackPoint::kSync);
    }
    return result;
  }
};

namespace rows {
inline SyncRow sync_context(CUcontext context = nullptr) noexcept {
  return {format::SyncTarget::kDevice, nullptr, false, 0, context};
}
inline SyncRow sync_stream(CUstream stream) noexcept { return {format::SyncTarget::kStream, stream, true, 0, nullptr}; }
inline SyncRow sync_event(CUevent event) noexcept {
  return {format::SyncTarget::kEvent, nullptr, false, reinterpret_cast<uint64_t>(event), nullptr};
}
inline SyncRow wait_event(CUstream stream, CUevent event) noexcept {
  return {format::SyncTarget::kStreamWaitEvent, stream, true, reinterpret_cast<uint64_t>(event), nullptr};
}
}  // namespace rows

}  // namespace proflaunch::cuda
