// What the launch, copy, memset and host-function rows share: GPU work
// submitted to a stream. Built right before the real call, in this order:
// the device and context of the calling thread, the stream as it is recorded
// and as it really runs (a NULL stream in a _ptsz/_ptds variant is the
// thread's per-thread default stream), the API span's start, then the timing
// backend's start event. The span must begin before the start event is
// recorded: on an idle stream the GPU work can begin at once, and it must
// not appear to start before the call that submitted it.
//
// After the real call: returned() at once (the span's end, then the end
// event), then the record, then queue() (gpu_timing.h says why this order).
#pragma once

#include <cuda.h>

#include "preload/cuda/api_call.h"
#include "preload/cuda/capture_state.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/library_frame.h"

namespace proflaunch::cuda {

class StreamOperation {
 public:
  StreamOperation(uint16_t api, Operation operation, bool per_thread, bool async, Submission submission,
                  CUstream stream, bool done_by_return = false) noexcept
      : device_(current_device(&context_)),
        runs_on_(effective_stream(stream, per_thread)),
        stream_id_(stream_handle(stream, per_thread)),
        captured_(stream_may_be_capturing(runs_on_)),
        library_(operation == Operation::kLaunch ? take_library_frame_entry(runs_on_) : nullptr),
        call_(api, operation, variant_flags(per_thread, async), library_ ? library_->correlation_id : 0),
        // Never a timing event into a capturing stream (capture_state.h).
        token_(captured_  ? TimingToken{}
               : library_ ? library_->start()
                          : (gpu_timing_enabled() ? timing_for(operation).before(runs_on_, context_, submission, done_by_return)
                                                  : TimingToken{})) {
    if (library_ != nullptr && !captured_ && gpu_timing_enabled()) {
      foreign_ = &gpu_timing();
      foreign_->foreign_submission_begin();
    }
  }

  // Right after the real call returned, before anything else.
  void returned(CUresult result) noexcept {
    call_.returned();
    submitted_ = result == CUDA_SUCCESS;
    if (foreign_ != nullptr) foreign_->foreign_submission_end(submitted_);
    if (token_.start != nullptr) owner_of(token_).returned(token_, runs_on_, submitted_);
  }

  // Fills what every stream record shares: span, device, stream, context.
  template <typename Record>
  void finish(Record& record, CUresult result) noexcept {
    call_.finish(record.span, result);
    if (captured_) record.span.flags |= format::kApiCaptured;
    record.device = device_;
    record.stream = stream_id_;
    record.context = reinterpret_cast<uint64_t>(context_);
  }

  // After the record was committed: the timing backend resolves it later.
  // Work the driver refused never runs (returned() let its events go); work
  // that runs without a start event is still handed over, to be counted.
  // Captured work did not run: it has no GPU time, and the node it became
  // is recorded instead (after the call's record and its stack).
  void queue(format::GpuActivityKind kind) noexcept {
    if (captured_) {
      if (submitted_) record_captured_node(call_.correlation(), runs_on_);
      return;
    }
    if (submitted_ && gpu_timing_enabled())
      owner_of(token_).queue(token_, GpuOperation{call_.correlation(), stream_id_, device_, kind});
  }

  bool captured() const noexcept { return captured_; }

  static GpuTimingBackend& timing_for(Operation operation) noexcept {
    return operation == Operation::kHostFunction ? gpu_timing_for_host_work() : gpu_timing();
  }

  uint64_t correlation() const noexcept { return call_.correlation(); }
  int device() const noexcept { return device_; }

 private:
  CUcontext context_ = nullptr;  // before device_: current_device() fills it
  int device_;
  CUstream runs_on_;
  uint64_t stream_id_;
  bool captured_;
  LibraryFrameEntry* library_;  // a library call's entry this launch took, else null
  DriverCall call_;     // before token_: see the top of this file
  TimingToken token_;
  bool submitted_ = false;
  GpuTimingBackend* foreign_ = nullptr;  // told about a library frame's launch (gpu_timing.h)
};

}  // namespace proflaunch::cuda
