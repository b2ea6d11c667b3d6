// The row of every driver API without one of its own (and of every HIP API:
// ApiCallRowOf<HipVendor>): the call's name, duration and result. Counted
// instead when the API is counted (hook_rows.txt) or, for the driver, when a
// runtime call made it on its own behalf (the runtime call is the one
// recorded: api_call.h).
#pragma once

#include <type_traits>

#include "preload/control/capture_control.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/rows/cuda_vendor.h"
#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

template <typename Vendor>
struct ApiCallRowOf {
  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&&, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::recording()) return call_real();
    if (Vendor::counts(Hook::api)) return counted_call<Hook>(call_real);
    DriverCall call(Hook::api, Operation::kOther, variant_flags(Hook::per_thread, false));
    if constexpr (std::is_void_v<decltype(call_real())>) {
      call_real();
      call.returned();
      record_api_call(call, 0);
    } else {
      const auto result = call_real();
      call.returned();
      record_api_call(call, result);
      return result;
    }
  }
};
using ApiCallRow = ApiCallRowOf<CudaVendor>;

// cuCtxSetCurrent, cuCtxPushCurrent, cuCtxPopCurrent: recorded like any
// call, and the thread's cached current context is forgotten whether or not
// the call is recorded (current_context.h).
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
