// The row of every runtime API. A runtime call opens a frame on its thread
// (api_call.h): the driver call that does its operation (a launch, a copy, an
// allocation...) is recorded once, under the runtime's name and start time;
// the other driver calls it makes on its behalf are counted. A runtime call
// whose frame no driver record took (it failed before reaching the driver,
// or its operation has no driver record of its own) is recorded here, as an
// ApiCall. Nested runtime calls (the runtime calling its own exports) pass
// through.
#pragma once

#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

struct RuntimeRow {
  Operation operation = Operation::kOther;
  uint32_t domain = kTraceCuda;  // PROFLAUNCH_TRACE domain: kTraceMemory for allocations
  const void* kernel_hint = nullptr;  // a launch's host stub or runtime kernel handle, for naming; a host function's function

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    RuntimeFrame& frame = tls_runtime_frame;
    if (inside_profiler() || frame.api != 0 || !runtime::recording()) return call_real();
    const RuntimeRow row = describe();
    if ((trace_domains() & row.domain) == 0) return call_real();
    const uint16_t flags = Hook::per_thread ? format::kApiPerThreadStream : 0;
    if (counted_api(Hook::api)) {
      frame = RuntimeFrame{Hook::api, flags, Operation::kCounted, false, 0, 0};
      using Result = decltype(call_real());
      if constexpr (std::is_void_v<Result>) {
        call_real();
        frame = RuntimeFrame{};
        count_call(Hook::api);
        return;
      } else {
        const Result result = call_real();
        frame = RuntimeFrame{};
        if (!call_failed(result)) count_call(Hook::api);
        else record_failed_call(Hook::api, flags, result_code(result));
        return result;
      }
    } else {
      frame = RuntimeFrame{Hook::api, flags, row.operation, false, now_ticks(),
                           reinterpret_cast<uint64_t>(row.kernel_hint)};
      using Result = decltype(call_real());
      if constexpr (std::is_void_v<Result>) {
        call_real();
        close_frame(0);
      } else {
        const Result result = call_real();
        close_frame(result_code(result));
        return result;
      }
    }
  }

  // Ends the thread's runtime frame; records the runtime call itself when no
  // driver record took its name.
  static void close_frame(int32_t result) noexcept {
    RuntimeFrame& frame = tls_runtime_frame;
    const RuntimeFrame done = frame;
    frame = RuntimeFrame{};
    if (done.consumed) return;
    const uint64_t end = now_ticks();
    if (auto* record = emit_api_call()) {
      record->span = format::ApiSpan{done.begin_ns, end, next_correlation_id(), result, done.api, done.flags};
      commit();
    }
  }
};

namespace rows {
inline RuntimeRow runtime_call() noexcept { return {}; }
inline RuntimeRow runtime_launch(const void* kernel_hint) noexcept {
  return {Operation::kLaunch, kTraceCuda, kernel_hint};
}
// The program's function: the runtime queues one of its own on the driver
// (cudaStreamAddCallback's callback takes a cudaError_t, the driver's a
// CUresult), so the driver call inside records this one instead.
template <typename HostFunction>
inline RuntimeRow runtime_host_function(HostFunction function) noexcept {
  return {Operation::kHostFunction, kTraceCuda, reinterpret_cast<const void*>(function)};
}
inline RuntimeRow runtime_copy() noexcept { return {Operation::kCopy}; }
inline RuntimeRow runtime_set() noexcept { return {Operation::kSet}; }
inline RuntimeRow runtime_sync() noexcept { return {Operation::kSync}; }
inline RuntimeRow runtime_stream_object() noexcept { return {Operation::kStreamObject}; }
inline RuntimeRow runtime_event_object() noexcept { return {Operation::kEventObject}; }
inline RuntimeRow runtime_event_record() noexcept { return {Operation::kEventRecord}; }
inline RuntimeRow runtime_capture() noexcept { return {Operation::kCapture}; }
inline RuntimeRow runtime_graph() noexcept { return {Operation::kGraph}; }
inline RuntimeRow runtime_graph_launch() noexcept { return {Operation::kGraphLaunch}; }
inline RuntimeRow runtime_allocate() noexcept { return {Operation::kAllocate, kTraceMemory}; }
inline RuntimeRow runtime_free() noexcept { return {Operation::kFree, kTraceMemory}; }
inline RuntimeRow runtime_memory_info() noexcept { return {Operation::kMemoryInfo, kTraceMemory}; }
}  // namespace rows

}  // namespace proflaunch::cuda
