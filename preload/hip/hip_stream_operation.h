// GPU work submitted to a HIP stream, as the row families see it
// (preload/cuda/stream_operation.h is CUDA's): built right before the real
// call (the device, the stream, the span's start, then the start event),
// returned() right after it (the span's end and the end event), finish()
// for the record, queue() for the GPU time.
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/cuda/api_call.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/hip/hip_headers.h"
#include "preload/hip/hip_services.h"
#include "preload/hip/hip_timing.h"

namespace proflaunch::hip {

// A library call in progress on this thread (hip_library_frame.h): the
// stream it was given, its correlation id and the start event taken there.
struct HipFrameEntry {
  hipStream_t stream;
  uint64_t correlation_id;
  HipTimingToken start;
  bool taken;
};
struct HipLibraryFrame {
  uint32_t count;  // 0 or 1
  HipFrameEntry entry;
};
extern __thread __attribute__((tls_model("initial-exec"))) HipLibraryFrame tls_hip_library_frame;

inline HipFrameEntry* take_library_frame_entry(hipStream_t stream) noexcept {
  HipLibraryFrame& frame = tls_hip_library_frame;
  if (frame.count == 0 || frame.entry.taken || frame.entry.stream != stream) return nullptr;
  frame.entry.taken = true;
  return &frame.entry;
}

// The stream a NULL handle means in this variant (_spt: the thread's own).
inline hipStream_t runs_on(hipStream_t stream, bool per_thread) noexcept {
  return stream == nullptr && per_thread ? hipStreamPerThread : stream;
}

inline uint64_t stream_id(hipStream_t stream, bool per_thread) noexcept {
  return cuda::stream_handle(reinterpret_cast<CUstream>(stream), per_thread);
}

class HipStreamOperation {
 public:
  // A launch takes the entry of a library call in progress on its stream
  // (hip_library_frame.h). An asynchronous submission holds the stream's
  // submission lock between its events (hip_timing.h). A kernel that can be
  // launched with events bound to its dispatch (`in_dispatch`) gets them
  // unrecorded: dispatch_start() and dispatch_stop() are what the launch
  // must be given.
  HipStreamOperation(uint16_t api, cuda::Operation operation, bool per_thread, bool async,
                     cuda::Submission submission, hipStream_t stream, bool done_by_return = false,
                     bool in_dispatch = false) noexcept
      : ordinal_(current_device()),
        stream_(runs_on(stream, per_thread)),
        stream_id_(stream_id(stream, per_thread)),
        library_(operation == cuda::Operation::kLaunch ? take_library_frame_entry(stream_) : nullptr),
        call_(api, operation, cuda::variant_flags(per_thread, async),
              library_ != nullptr ? library_->correlation_id : 0),
        token_(library_ != nullptr   ? library_->start
               : !hip_timing_enabled() ? HipTimingToken{}
               : in_dispatch           ? hip_timing_dispatch(stream_, ordinal_)
                             : hip_timing_before(stream_, ordinal_, submission == cuda::Submission::kAsynchronous,
                                                 done_by_return)) {
    // A launch the shim brackets itself; not a library call's launch, whose
    // start event was taken where the library call began, on purpose.
    token_.starts_by_return = operation == cuda::Operation::kLaunch && library_ == nullptr && !token_.in_dispatch;
  }

  hipEvent_t dispatch_start() const noexcept { return token_.in_dispatch ? token_.start : nullptr; }
  hipEvent_t dispatch_stop() const noexcept { return token_.in_dispatch ? token_.end : nullptr; }

  void returned(hipError_t result) noexcept {
    call_.returned();
    submitted_ = result == hipSuccess;
    hip_timing_returned(token_, stream_, submitted_);
  }

  template <typename Record>
  void finish(Record& record, hipError_t result) noexcept {
    call_.finish(record.span, static_cast<int32_t>(result));
    if (token_.captured) record.span.flags |= format::kApiCaptured;
    record.device = recorded_device(ordinal_);
    record.stream = stream_id_;
    record.context = 0;
  }

  void queue(format::GpuActivityKind kind) noexcept {
    if (submitted_ && hip_timing_enabled())
      hip_timing_queue(token_, call_.correlation(), stream_id_, recorded_device(ordinal_), kind);
  }

  uint64_t correlation() const noexcept { return call_.correlation(); }

 private:
  int ordinal_;
  hipStream_t stream_;
  uint64_t stream_id_;
  HipFrameEntry* library_;  // a library call's entry this launch took, else null
  cuda::DriverCall call_;
  HipTimingToken token_;
  bool submitted_ = false;
};

}  // namespace proflaunch::hip
