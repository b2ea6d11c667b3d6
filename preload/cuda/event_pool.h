// Driver events for GPU timing, recycled: creating an event costs the driver
// far more than recording one, so each operation takes two from a pool.
// The calling thread keeps a small cache (no lock on the hot path); the
// writer returns resolved events to a shared pool in batches (mutex, cold).
//
// Events belong to a context. When a context is destroyed its events die
// with it: the pool forgets them (never destroys them: the handles are gone)
// and caches holding them are dropped through an epoch bump.
#pragma once

#include <cuda.h>

namespace proflaunch::cuda {

// Hot path: two events of `context`, which is current on the calling thread.
bool take_event_pair(CUcontext context, CUevent* start, CUevent* end) noexcept;

// Hot path: events taken but not used (the operation was refused).
void return_event_pair(CUcontext context, CUevent start, CUevent end) noexcept;

// Writer: events whose operation was resolved.
void release_event(CUcontext context, CUevent event) noexcept;

// The context was destroyed.
void forget_context_events(CUcontext context) noexcept;

// Fork child: nothing of the parent's contexts is usable.
void reset_event_pool_after_fork() noexcept;

}  // namespace proflaunch::cuda
