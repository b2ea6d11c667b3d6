// What every row family shares: results, counting, and recording a call that
// has nothing but a span.
#pragma once

#include <cstdint>
#include <type_traits>

#include "preload/cuda/api_call.h"
#include "preload/cuda/hook.h"
#include "preload/cuda/recording.h"
#include "preload/intercept/hook_registry.h"
#include "preload/record/emit.h"

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
  if (auto* record = emit<format::ApiCallRecord>()) {
    call.finish(record->span, result_code(result));
    commit();
  }
}

}  // namespace proflaunch::cuda
