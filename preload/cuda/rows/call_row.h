// The row of every driver API without one of its own: the call's name,
// duration and result. Counted instead when the API is counted
// (hook_rows.txt) or when a runtime call made it on its own behalf (the
// runtime call is the one recorded: api_call.h).
#pragma once

#include "preload/control/capture_control.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

struct ApiCallRow {
  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&&, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !cuda_domain_recording()) return call_real();
    if (counted_api(Hook::api) || tls_runtime_frame.api != 0) return counted_call<Hook>(call_real);
    DriverCall call(Hook::api, Operation::kOther, variant_flags(Hook::per_thread, false));
    const auto result = call_real();
    call.returned();
    record_api_call(call, result);
    return result;
  }
};

// cuCtxSetCurrent, cuCtxPushCurrent, cuCtxPopCurrent: recorded like any
// call, and the thread's cached current context is forgotten whether or not
// the call is recorded (driver_services.h).
struct ContextChangeRow {
  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    const auto result = ApiCallRow::run<Hook>(describe, call_real);
    forget_current_context();
    return result;
  }
};

// cuProfilerStart / cuProfilerStop (the runtime's reach them): recorded
// like any call, and with --capture-range=cudaProfilerApi they open and
// close capture windows, the start before its record, the stop after.
struct ProfilerRow {
  bool start;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    const bool trigger = capture::armed(capture::kArmedProfilerApi) && !inside_profiler();
    const ProfilerRow row = describe();
    if (trigger && row.start) capture::profiler_api(true);
    const auto result = ApiCallRow::run<Hook>(describe, call_real);
    if (trigger && !row.start) capture::profiler_api(false);
    return result;
  }
};

namespace rows {
inline ApiCallRow api_call() noexcept { return {}; }
inline ProfilerRow profiler(bool start) noexcept { return {start}; }
inline ContextChangeRow context_change() noexcept { return {}; }
}  // namespace rows

}  // namespace proflaunch::cuda
