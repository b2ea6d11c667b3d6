// The frame a runtime hook opens around the real runtime call (see
// api_call.h for how it and the driver hooks share the recording).
#pragma once

#include <cstdint>

#include "preload/cuda/api_call.h"
#include "preload/cuda/recording.h"

namespace proflaunch::cuda {

// Runs `call_real` inside a RuntimeFrame for `api`. If no recording driver
// hook ran inside it, records an ApiCall for the runtime call itself (a call
// the runtime rejected before reaching the driver: its error is recorded).
// Nested runtime calls (the runtime calling itself through the PLT) pass
// through.
// `domain` is the PROFLAUNCH_TRACE domain the call belongs to (kTraceCuda,
// kTraceMemory for allocations).
template <typename CallReal>
auto traced_runtime_in(uint32_t domain, Api api, Operation operation, uint16_t flags,
                       const void* kernel_name_hint, CallReal&& call_real) {
  RuntimeFrame& frame = tls_runtime_frame;
  if (inside_profiler() || frame.api != 0 || !runtime::recording() || (trace_domains() & domain) == 0)
    return call_real();
  frame = RuntimeFrame{api_id(api), flags, operation, false, now_ticks(),
                       reinterpret_cast<uint64_t>(kernel_name_hint)};
  const auto result = call_real();
  const RuntimeFrame done = frame;
  frame = RuntimeFrame{};
  if (!done.consumed) {
    if (auto* record = emit<format::ApiCallRecord>()) {
      record->span.begin_ns = done.begin_ns;
      record->span.end_ns = now_ticks();
      record->span.correlation_id = next_correlation_id();
      record->span.result = static_cast<int32_t>(result);
      record->span.api = done.api;
      record->span.flags = done.flags;
      commit();
    }
  }
  return result;
}

template <typename CallReal>
auto traced_runtime(Api api, Operation operation, uint16_t flags, const void* kernel_name_hint,
                    CallReal&& call_real) {
  return traced_runtime_in(kTraceCuda, api, operation, flags, kernel_name_hint, call_real);
}

}  // namespace proflaunch::cuda

// One exported runtime wrapper: the real function of exactly this symbol, run
// inside a runtime frame named `api` doing `operation`. `hint` names the
// kernel for a launch (the host stub or runtime kernel handle), else nullptr.
// The file using it declares `namespace pc = proflaunch::cuda` and a
// real_<symbol> slot for each symbol.
#define PROFLAUNCH_RUNTIME_HOOK(symbol, api, operation, flags, hint, params, args)    \
  PROFLAUNCH_EXPORT cudaError_t symbol params {                                       \
    using namespace pc;                                                               \
    auto* real = PROFLAUNCH_REAL(symbol, kRuntimeLibrary);                            \
    if (real == nullptr) return cudaErrorInitializationError;                         \
    return traced_runtime(Api::api, Operation::operation, flags, hint,                \
                          [&] { return real args; });                                 \
  }
