// Mapping a context's GPU event times to the host clock. Each context gets a
// private non-blocking stream and "anchor" events: an anchor is recorded on
// the idle stream and waited for; its GPU time is taken as the host time the
// record call began (see add_anchor for why not the middle of the wait). An
// operation's start is then anchor + elapsed time (cuEventElapsedTime), its
// end start + elapsed.
//
// cuEventElapsedTime answers a float of milliseconds: 24 bits of mantissa,
// 60 ns of resolution at 1 s. The writer therefore records a fresh anchor
// every second, and an operation is measured from the newest anchor that was
// published (waited for) before the operation was submitted, so the elapsed
// time is never negative and rarely above a second.
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
