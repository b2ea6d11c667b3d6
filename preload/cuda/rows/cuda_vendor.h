// The CUDA side of the row families: the types and the few small functions
// in which CUDA's recording differs from HIP's (hip/hip_vendor.h). Each
// family (launch_row.h, copy_row.h, memory_row.h, sync_row.h, graph_row.h,
// call_row.h) is written once over a Vendor that provides:
//
//   types      Result, Stream, Context, MemoryPool, MemoryEnd, Place (the
//              device and context a call runs on), StreamOperation (GPU work
//              submitted to a stream: stream_operation.h), SubmissionLock
//   kSuccess   the success result
//   recording(), memory_active(), counts(api)    whether a call records
//   current_place(), recorded_device(place), stream_id(stream, per_thread),
//   runs_on(stream, per_thread)                  where a call runs
//   launch_seen(describe), name_launch(...)      what a launch teaches
//   classify(end), copy_submission(...), copy_done_by_return(...),
//   memset_done_by_return(...)                   copies and memsets
//   captures_may_be_open(), stream_may_be_capturing(stream),
//   RelaxedCaptureScope, record_captured_node(...)   stream capture
//   pool_of_address(...), current_pool_of_device(...),
//   pool_reserved_bytes(...)                     memory pools
#pragma once

#include <cuda.h>

#include <cstdint>

#include "formats/records.h"
#include "preload/control/capture_control.h"
#include "preload/cuda/api_call.h"
#include "preload/cuda/capture_state.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/memory_kinds.h"
#include "preload/cuda/memory_pool_queries.h"
#include "preload/cuda/recording.h"
#include "preload/cuda/stream_operation.h"
#include "preload/intercept/hook_registry.h"

namespace proflaunch::cuda {

struct CudaVendor {
  using Result = CUresult;
  using Stream = CUstream;
  using Context = CUcontext;
  using MemoryPool = CUmemoryPool;
  using MemoryEnd = cuda::MemoryEnd;
  using StreamOperation = cuda::StreamOperation;
  static constexpr Result kSuccess = CUDA_SUCCESS;

  // Whether a call records: the cuda domain for calls, the memory domain for
  // allocations (followed between capture windows too); a counted call, or
  // one a runtime call makes on its behalf (api_call.h), is counted instead.
  static bool recording() noexcept { return cuda_domain_recording(); }
  static bool memory_active() noexcept { return memory_domain_active(); }
  static bool counts(uint16_t api) noexcept { return hooks::counted_api(api) || tls_runtime_frame.api != 0; }

  // The device and context of the calling thread.
  struct Place {
    int device = -1;
    CUcontext context = nullptr;
  };
  static Place current_place() noexcept {
    Place place;
    place.device = current_device(&place.context);
    return place;
  }
  static int32_t recorded_device(const Place& place) noexcept { return place.device; }
  static uint64_t stream_id(CUstream stream, bool per_thread) noexcept { return stream_handle(stream, per_thread); }
  static CUstream runs_on(CUstream stream, bool per_thread) noexcept { return effective_stream(stream, per_thread); }

  // --step-range=kernel:NAME: a launch of the step kernel is a step
  // boundary, seen before the launch is (or is not) recorded.
  template <typename Describe>
  static void launch_seen(Describe& describe) noexcept {
    if (__builtin_expect(!capture::armed(capture::kArmedKernelStep), 1)) return;
    const auto row = describe();
    if (!row.host_function() && is_step_kernel(row.function)) capture::kernel_step();
  }
  // The host function a stream will run, as the program passed it: inside
  // cudaLaunchHostFunc or cudaStreamAddCallback the driver is handed the
  // runtime's own trampoline (libcudart.so.13+0x15560 for every callback),
  // the runtime call's frame holds the program's.
  static uint64_t host_function_passed(uint64_t function) noexcept {
    const RuntimeFrame& frame = tls_runtime_frame;
    if (frame.api != 0 && !frame.consumed && frame.operation == Operation::kHostFunction && frame.kernel_name_hint != 0)
      return frame.kernel_name_hint;
    return function;
  }
  static void name_launch(uint64_t function, bool host_function) noexcept {
    if (host_function) ensure_host_function_named(function);
    else ensure_function_named(function);
  }

  static void classify(MemoryEnd& end) noexcept { cuda::classify(end); }
  // An "async" copy from or to pageable memory may wait for the GPU
  // (staging): it is submitted as the synchronous copy it may be.
  static Submission copy_submission(bool async, const MemoryEnd& src, const MemoryEnd& dst) noexcept {
    return !async || is_pageable(src) || is_pageable(dst) ? Submission::kSynchronous : Submission::kAsynchronous;
  }
  // "API synchronization behavior" (CUDA driver API documentation): a
  // synchronous copy returns once the copy is done when it ends in host
  // memory, or starts in pinned host memory; from pageable memory it may
  // return once the data is staged, and device to device it does not wait.
  static bool copy_done_by_return(bool async, const MemoryEnd& src, const MemoryEnd& dst) noexcept {
    if (async) return false;
    const bool to_host = dst.kind == format::MemoryKind::kPageableHost || dst.kind == format::MemoryKind::kPinnedHost;
    return to_host || src.kind == format::MemoryKind::kPinnedHost;
  }
  // A synchronous memset waits for the GPU only when it sets pinned host or
  // managed memory (the same documentation).
  static bool memset_done_by_return(bool async, const MemoryEnd& dst) noexcept {
    return !async && (dst.kind == format::MemoryKind::kPinnedHost || dst.kind == format::MemoryKind::kManaged);
  }

  // A wait queued on a stream (cuStreamWaitEvent) delays what follows it: it
  // must not land inside another thread's timed operation
  // (gpu_timing_events.cpp), so it holds the stream's submission lock.
  class SubmissionLock {
   public:
    SubmissionLock(const Place& place, bool wait_on_stream, CUstream runs_on) noexcept
        : timing_(gpu_timing()),  // the lock goes back to the backend that gave it
          lock_(wait_on_stream && gpu_timing_enabled() ? timing_.lock_submissions(place.context, runs_on) : nullptr) {}
    void release() noexcept {
      if (lock_ != nullptr) timing_.unlock_submissions(lock_);
      lock_ = nullptr;
    }

   private:
    GpuTimingBackend& timing_;
    void* lock_;
  };

  static bool captures_may_be_open() noexcept { return cuda::captures_may_be_open(); }
  static bool stream_may_be_capturing(CUstream runs_on) noexcept { return cuda::stream_may_be_capturing(runs_on); }
  using RelaxedCaptureScope = cuda::RelaxedCaptureScope;
  static void record_captured_node(uint64_t correlation_id, CUstream runs_on) noexcept {
    cuda::record_captured_node(correlation_id, runs_on);
  }

  static CUmemoryPool pool_of_address(uint64_t address) noexcept {
    return cuda::pool_of_address(static_cast<CUdeviceptr>(address));
  }
  static CUmemoryPool current_pool_of_device(int device) noexcept { return cuda::current_pool_of_device(device); }
  static uint64_t pool_reserved_bytes(CUmemoryPool pool) noexcept { return cuda::pool_reserved_bytes(pool); }
};

}  // namespace proflaunch::cuda
