// Mapping a context's GPU event times to the host clock. Each context gets a
// private non-blocking stream and "anchor" events (base/event_anchors.h: why
// and how, shared with HIP): an operation's start is the newest anchor
// published before it was submitted + elapsed time (cuEventElapsedTime), its
// end start + elapsed. The writer records a fresh anchor every second.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace proflaunch::cuda {

// Hot path (cold once per context and thread): makes sure `context`, current
// on the calling thread, has a clock. Returns its generation (non-zero), or 0
// if the clock cannot be set up (no timing for this operation).
uint32_t ensure_context_clock(CUcontext context) noexcept;

struct ResolvedTimes {
  uint64_t start_ns;
  uint64_t end_ns;
};

// Writer: the host times of an operation whose end event has completed.
// `context` must be current on the calling thread. False if the context's
// clock is gone (destroyed) or the driver refuses.
bool resolve_operation_times(CUcontext context, uint32_t generation, CUevent start, CUevent end,
                             uint64_t submitted_ns, ResolvedTimes* times) noexcept;

// Writer: records a new anchor on each live context whose newest anchor is
// older than the refresh period.
void refresh_context_clocks(uint64_t now_ns) noexcept;

// Whether (context, generation) is still alive.
bool context_clock_alive(CUcontext context, uint32_t generation) noexcept;

// The context was destroyed: its clock (stream, anchors) died with it.
void forget_context_clock(CUcontext context) noexcept;

void reset_context_clocks_after_fork() noexcept;

}  // namespace proflaunch::cuda
