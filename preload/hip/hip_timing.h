// GPU time of HIP work from HIP events (Debian 12 has no roctracer or
// rocprofiler-sdk, so there is no activity API to read instead: an AMD
// activity backend is future work). Each kernel, copy and memset is
// bracketed by a start and an end event on its stream; the writer thread
// resolves them once complete.
//
// HIP events have no absolute timestamps, only differences
// (hipEventElapsedTime). Each device gets an anchor event, recorded and
// waited for (eight tries) on first use: the anchor's time is the middle of
// the narrowest window between the host clock before the record and after
// the wait, and an operation's times are the anchor's plus its events'
// distance from it. The error is half that window (docs/amd.md).
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/hip/hip_headers.h"

namespace proflaunch::hip {

// Trivially constructible (a library frame keeps one in __thread storage):
// value-initialize it (HipTimingToken{}) for "no events".
struct HipTimingToken {
  hipEvent_t start;
  hipEvent_t end;
  int ordinal;
  uint64_t submitted_ns;
  uint64_t returned_ns;
  bool done_by_return;
  bool captured;          // the stream was capturing: the work does not run now
  void* submission_lock;  // held from the start event to the end event
};

bool hip_timing_enabled() noexcept;

// Right before the real call: the start event on `stream` (null token when
// timing is off, the stream is capturing, or events cannot be had). An
// `asynchronous` submission holds the stream's submission lock until
// hip_timing_returned (hip_timing.cpp says why).
HipTimingToken hip_timing_before(hipStream_t stream, int ordinal, bool asynchronous, bool done_by_return) noexcept;
// Right after it: the end event, or the token's events given back when the
// call failed.
void hip_timing_returned(HipTimingToken& token, hipStream_t stream, bool submitted) noexcept;
// After the record was committed: the writer resolves it.
void hip_timing_queue(const HipTimingToken& token, uint64_t correlation_id, uint64_t stream, int32_t device,
                      format::GpuActivityKind kind) noexcept;

// A start event no operation used (a library call that launched nothing).
void hip_timing_release(const HipTimingToken& token) noexcept;

// Stream capture begins and ends (the hooks count them): while any capture
// is active, the start of every operation asks whether its stream captures.
void hip_capture_began() noexcept;
void hip_capture_ended() noexcept;

}  // namespace proflaunch::hip
