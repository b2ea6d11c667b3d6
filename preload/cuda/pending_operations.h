// Operations waiting for their GPU times: each recording thread pushes into
// its own single-producer ring (no lock on the hot path); the writer takes
// them in order. A thread's ring is adopted by a later thread once its owner
// exited and it is empty, so thread churn does not grow memory.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "formats/records.h"

namespace proflaunch::cuda {

struct PendingOperation {
  CUevent start;
  CUevent end;
  CUcontext context;
  uint64_t start_recorded_ns;  // host time before the start event was recorded (picks the clock anchor)
  uint64_t submitted_ns;  // host time right before the real call: the work cannot start earlier
  uint64_t returned_ns;   // host time the real call returned
  uint64_t correlation_id;
  uint64_t stream;        // as recorded
  int32_t device;
  uint32_t clock_generation;  // which life of `context` (addresses are reused)
  format::GpuActivityKind kind;
  bool done_by_return;
  // A kernel launch (gpu_timing_events.cpp): the call returns once
  // the work is queued, so its work began near the return.
  bool starts_by_return;
  // A library call's launch, timed from the call's arrival on the stream
  // (library_frame.h): the library's own work queued before it is inside.
  bool timed_from_arrival;
};

// Hot path. False when the calling thread's ring is full (the caller counts
// the operation as unresolved).
bool push_pending_operation(const PendingOperation& operation) noexcept;

// Writer: fixes, for every ring, how far the next take goes (call before the
// writer drains the record rings, so an operation is only taken after its
// launch record was staged).
void snapshot_pending_operations() noexcept;

// Writer: hands every operation up to the snapshot to `sink`, oldest first
// per thread, and frees their slots.
template <typename Sink>
void take_pending_operations(Sink&& sink) noexcept;

// An operation submitted to the GPU that cannot be timed at all (its start
// event could not be taken or recorded): counted like one that could not be
// queued, so the writer reports it (LOST, kGpuTimingUnresolved).
void count_untimed_operation() noexcept;

// Unresolved operations that could not even be queued (or timed), since the
// last call.
uint64_t take_queue_overflow_count() noexcept;

// Fork child: the parent's rings are the parent's.
void reset_pending_operations_after_fork() noexcept;

// ---- implementation detail of take_pending_operations

struct PendingRing;
PendingRing* first_pending_ring() noexcept;
PendingRing* next_pending_ring(PendingRing* ring) noexcept;
// Returns the next operation up to the snapshot, or null.
const PendingOperation* peek_pending(PendingRing* ring) noexcept;
void pop_pending(PendingRing* ring) noexcept;

template <typename Sink>
void take_pending_operations(Sink&& sink) noexcept {
  for (PendingRing* ring = first_pending_ring(); ring != nullptr; ring = next_pending_ring(ring)) {
    while (const PendingOperation* operation = peek_pending(ring)) {
      sink(*operation);
      pop_pending(ring);
    }
  }
}

}  // namespace proflaunch::cuda
