// What every row family shares, for either vendor: results, counting,
// recording a call that has nothing but a span, and the steps around the real
// call of a stream operation or of a call that submits no GPU work.
#pragma once

#include <cstdint>
#include <type_traits>

#include "preload/cuda/api_call.h"
#include "preload/cuda/hook.h"
#include "preload/cuda/recording.h"
#include "preload/intercept/hook_registry.h"
#include "preload/record/emit.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

using hooks::counted_api;  // hook_rows.txt's `counted`, changed by PROFLAUNCH_COUNTED

// CUresult and cudaError_t: success, and "not ready" (a query's normal
// answer), are not failures. Results of other types (pointers, the nvcc
// ABI's integers) say nothing about failure.
template <typename Result>
inline bool call_failed(Result result) noexcept {
  if constexpr (std::is_enum_v<Result>) {
    const int code = static_cast<int>(result);
    return code != 0 && code != 600;  // CUDA_ERROR_NOT_READY, cudaErrorNotReady
  } else {
    return false;
  }
}

template <typename Result>
inline int32_t result_code(Result result) noexcept {
  if constexpr (std::is_enum_v<Result> || std::is_integral_v<Result>) return static_cast<int32_t>(result);
  else return 0;
}

// One more call of `api` on this thread, counted, not recorded.
inline void count_call(uint16_t api) noexcept {
  ThreadBuffer* buffer = tls_thread_buffer;
  if (__builtin_expect(buffer == nullptr, 0)) {
    buffer = attach_current_thread();
    if (buffer == nullptr) return;
  }
  buffer->count_call(api);
}

// A counted call that failed: an ApiCall with the one timestamp taken after
// it returned (kApiNoDuration).
void record_failed_call(uint16_t api, uint16_t flags, int32_t result) noexcept;

// Runs a call that is counted. Void results (the nvcc registration ABI) are
// counted unconditionally.
template <typename Hook, typename CallReal>
inline auto counted_call(CallReal&& call_real) {
  using Result = decltype(call_real());
  if constexpr (std::is_void_v<Result>) {
    call_real();
    count_call(Hook::api);
  } else {
    const Result result = call_real();
    if (__builtin_expect(!call_failed(result), 1))
      count_call(Hook::api);
    else
      record_failed_call(Hook::api, variant_flags(Hook::per_thread, false), result_code(result));
    return result;
  }
}

// An ApiCall for a driver call: its span and nothing else.
template <typename Result>
inline void record_api_call(DriverCall& call, Result result) noexcept {
  if (auto* record = emit_api_call()) {
    call.finish(record->span, result_code(result));
    commit();
  }
}

// What every stream-work family does once its operation is open (the
// vendor's StreamOperation, built right before the real call): the real
// call, then at once the span's end and the end event, the record (`fill`
// adds the family's own fields), its stack, then the GPU time
// (stream_operation.h says why in this order).
template <typename Record, typename StreamWork, typename CallReal, typename Fill>
auto submit(StreamWork& operation, CallReal&& call_real, format::GpuActivityKind kind, Fill&& fill) {
  const auto result = call_real();
  operation.returned(result);
  if (auto* record = emit<Record>()) {
    operation.finish(*record, result);
    fill(*record);
    commit();
    stacks::attach_stacks(operation.correlation(), format::StackPoint::kLaunch);
  }
  operation.queue(kind);
  return result;
}

// A call that submits no GPU work, on the calling thread's device: the span
// around the real call, then the record (`fill` adds the row's fields, given
// the result and where the call ran).
template <typename Record, typename Vendor, typename Hook, typename CallReal, typename Fill>
auto record_call(Operation operation, uint16_t flags, CallReal&& call_real, Fill&& fill) {
  const typename Vendor::Place place = Vendor::current_place();
  DriverCall call(Hook::api, operation, flags);
  const auto result = call_real();
  call.returned();
  if (auto* record = emit<Record>()) {
    call.finish(record->span, result);
    record->device = Vendor::recorded_device(place);
    fill(*record, result, place);
    commit();
  }
  return result;
}

}  // namespace proflaunch::cuda
