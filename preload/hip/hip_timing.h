// GPU time of HIP work from HIP events (Debian 12 has no roctracer or
// rocprofiler-sdk, so there is no activity API to read instead: an AMD
// activity backend is future work). A kernel is timed by two events bound
// to its own dispatch (the extended launch's start and stop events:
// hip_kernel_launch.h); other work, and a kernel that cannot be launched so,
// is bracketed by a start and an end event recorded on its stream. The
// writer thread resolves them once complete.
//
// Bracketing events measure from when the stream reaches the start event:
// on an idle stream that is before the real call even submitted the work,
// so a kernel's bracket would hold its whole launch call (a first launch
// loads the code object: milliseconds). An operation's start is therefore
// moved to no earlier than its call's start and than the end of the
// operation before it on its stream; a bracketed kernel launch whose call
// was long (cooperative launches and launches with the program's own
// events, which cannot take the shim's dispatch events) starts no earlier
// than its call returned, as CUDA's events fallback does.
//
// HIP events have no absolute timestamps, only differences
// (hipEventElapsedTime, a float of milliseconds). Each device in use gets a
// private stream and anchor events, a fresh one every second, as CUDA's
// contexts do (base/event_anchors.h says how an anchor is placed in host
// time and why it is refreshed: resolution and drift); an operation's times
// are the newest anchor's before its submission plus its events' distance
// from it (docs/amd.md).
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
  bool in_dispatch;       // the events are the kernel dispatch's own (not recorded by the shim)
  bool starts_by_return;  // a kernel launch bracketed by the shim's own events (hip_timing.cpp)
  void* submission_lock;  // held from the start event to the end event
};

bool hip_timing_enabled() noexcept;

// Right before the real call: the start event on `stream` (null token when
// timing is off, the stream is capturing, or events cannot be had). An
// `asynchronous` submission holds the stream's submission lock until
// hip_timing_returned (hip_timing.cpp says why).
HipTimingToken hip_timing_before(hipStream_t stream, int ordinal, bool asynchronous, bool done_by_return) noexcept;
// Instead, for a kernel launched with events bound to its dispatch: two
// events the launch itself is given (a null token when timing is off, the
// stream is capturing, or events cannot be had; `captured` says which). The
// stream's submission lock is held until hip_timing_returned, so that no
// other thread's work lands inside another operation's bracket.
HipTimingToken hip_timing_dispatch(hipStream_t stream, int ordinal) noexcept;
// Right after it: the end event (bracketing), or the token's events given
// back when the call failed.
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
