// What every CUDA hook does around the real call: timestamps, correlation id,
// and attribution to the runtime call that led to it.
//
// One operation is recorded once. The runtime reaches the driver through the
// hooked driver functions (it gets them from cuGetProcAddress, which hands out
// our wrappers), so the DRIVER hook is the one that records. A runtime hook
// only opens a RuntimeFrame: the driver hook that runs inside it records the
// operation under the runtime API's name (kApiViaRuntime) with the runtime
// call's start time, and marks the frame consumed. If the runtime call never
// reached a recording driver hook (it failed validation, or did something
// the shim does not trace), the runtime hook records an ApiCall itself.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "formats/records.h"
#include "preload/base/clock.h"
#include "preload/record/emit.h"

namespace proflaunch::cuda {

// What a runtime call does, so that only the driver call doing that (and not
// the lazy initialization the runtime runs first: cuInit, context retain,
// module loads) takes the runtime call's name.
enum class Operation : uint8_t {
  kOther,  // never takes a runtime call's name
  kLaunch,
  kCopy,
  kSet,
  kSync,
  kStreamObject,
  kEventObject,
  kEventRecord,
  kAllocate,     // memory obtained: allocations, host registration, VMM create/map/reserve
  kFree,         // memory given back, and pool trimming
  kMemoryInfo,   // cuMemGetInfo
  kHostFunction, // a host function queued on a stream
  kCounted,      // a counted runtime call: the driver calls inside are counted too
  kCapture,      // stream capture begin and end
  kGraph,        // graph instantiation, update, upload, destruction
  kGraphLaunch,  // a graph launched on a stream
};

struct RuntimeFrame {
  uint16_t api = 0;  // 0: no runtime call in progress on this thread
  uint16_t flags = 0;
  Operation operation = Operation::kOther;
  bool consumed = false;
  uint64_t begin_ns = 0;
  uint64_t kernel_name_hint = 0;  // host stub of a runtime launch, for naming; the program's host function
};

extern __thread __attribute__((tls_model("initial-exec"))) RuntimeFrame tls_runtime_frame;

// A driver call being recorded. Construct right before the real call, and
// before the GPU timing's start event: the span must contain that event,
// which on an idle stream is where the operation's GPU time starts.
class DriverCall {
 public:
  // `correlation_id`: 0 for a new one, else one the call must carry (a
  // launch inside a library frame, library_frame.h).
  DriverCall(uint16_t api, Operation operation, uint16_t flags, uint64_t correlation_id = 0) noexcept
      : frame_(matching_runtime_frame(operation)),
        // Inside a runtime call doing this operation, the span starts when
        // the runtime call did: no clock read of its own.
        begin_ns_(frame_ != nullptr ? frame_->begin_ns : now_ticks()),
        correlation_(correlation_id != 0 ? correlation_id : next_correlation_id()),
        api_(api),
        flags_(flags) {}

  uint64_t correlation() const noexcept { return correlation_; }

  // Right after the real call returned, before the hook does anything else:
  // the span ends here, not after the record and the stacks.
  void returned() noexcept { end_ns_ = now_ticks(); }

  // Fills a record's span after the real call returned `result`, taking the
  // name and start of an enclosing runtime call (which then records nothing
  // of its own).
  void finish(format::ApiSpan& span, int32_t result) noexcept {
    span.end_ns = end_ns_ != 0 ? end_ns_ : now_ticks();
    span.correlation_id = correlation_;
    span.result = result;
    span.begin_ns = begin_ns_;
    if (frame_ != nullptr) {
      frame_->consumed = true;
      span.api = frame_->api;
      span.flags = static_cast<uint16_t>(flags_ | frame_->flags | format::kApiViaRuntime);
    } else {
      span.api = api_;
      span.flags = flags_;
    }
  }

 private:
  // The runtime call in progress on this thread whose operation this driver
  // call does (and not the lazy initialization it runs first), or null.
  static RuntimeFrame* matching_runtime_frame(Operation operation) noexcept {
    RuntimeFrame& frame = tls_runtime_frame;
    if (frame.api == 0 || frame.consumed || operation == Operation::kOther || frame.operation != operation)
      return nullptr;
    return &frame;
  }

  RuntimeFrame* frame_;
  uint64_t begin_ns_;
  uint64_t end_ns_ = 0;
  uint64_t correlation_;
  uint16_t api_;
  uint16_t flags_;
};

// The stream as records carry it: the implicit streams normalized (see
// kStreamLegacy / kStreamPerThread in records.h). A NULL stream passed to a
// _ptsz/_ptds variant is the calling thread's per-thread default stream.
inline uint64_t stream_handle(CUstream stream, bool per_thread_variant) noexcept {
  if (stream == nullptr) return per_thread_variant ? format::kStreamPerThread : format::kStreamLegacy;
  if (stream == CU_STREAM_LEGACY) return format::kStreamLegacy;
  if (stream == CU_STREAM_PER_THREAD) return format::kStreamPerThread;
  return reinterpret_cast<uint64_t>(stream);
}

// The stream an operation really runs on, as a driver handle the shim can
// pass to its own calls (event records): a NULL stream means the per-thread
// default stream in a per-thread variant, and the legacy stream otherwise.
inline CUstream effective_stream(CUstream stream, bool per_thread_variant) noexcept {
  if (stream == nullptr) return per_thread_variant ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
  return stream;
}

inline uint16_t variant_flags(bool per_thread_variant, bool async) noexcept {
  return static_cast<uint16_t>((per_thread_variant ? format::kApiPerThreadStream : 0) |
                               (async ? format::kApiAsync : 0));
}

}  // namespace proflaunch::cuda
