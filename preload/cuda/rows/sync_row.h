// Where the CPU waits for the GPU: context, stream and event synchronization
// (the span is the wait), and cuStreamWaitEvent, a GPU-side wait recorded
// for the dependencies it creates. The family is HIP's synchronization too
// (hip/hip_rows.h): SyncRowOf<HipVendor>.
#pragma once

#include "preload/cuda/rows/cuda_vendor.h"
#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

template <typename Vendor>
struct SyncRowOf {
  format::SyncTarget target;
  typename Vendor::Stream stream = nullptr;  // as passed (normalized with the variant in run())
  bool has_stream = false;
  uint64_t event = 0;
  typename Vendor::Context context = nullptr;  // cuCtxSynchronize_v2's explicit context

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::recording()) return call_real();
    const SyncRowOf row = describe();
    typename Vendor::Place place = Vendor::current_place();
    if (row.context != nullptr) place.context = row.context;
    DriverCall call(Hook::api, Operation::kSync, variant_flags(Hook::per_thread, false));
    typename Vendor::SubmissionLock lock(place, row.target == format::SyncTarget::kStreamWaitEvent,
                                         Vendor::runs_on(row.stream, Hook::per_thread));
    const auto result = call_real();
    call.returned();
    lock.release();
    if (auto* record = emit<format::SynchronizeRecord>()) {
      call.finish(record->span, result);
      record->device = Vendor::recorded_device(place);
      record->stream = row.has_stream ? Vendor::stream_id(row.stream, Hook::per_thread) : 0;
      record->event = row.event;
      record->context = reinterpret_cast<uint64_t>(place.context);
      record->target = static_cast<uint8_t>(row.target);
      commit();
      stacks::attach_stacks(call.correlation(), format::StackPoint::kSync);
    }
    return result;
  }
};
using SyncRow = SyncRowOf<CudaVendor>;

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
