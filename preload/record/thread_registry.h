// Which threads record: each recording thread owns one ThreadBuffer (and its
// ring) in one anonymous mapping, created on the thread's first record and
// linked into a list the writer walks.
//
// Ownership: the list only grows at its head (under the registry mutex);
// buffers are unlinked and unmapped only by the writer, after their thread
// exited (retired) and their ring is empty. So the writer walks the list
// without a lock, and a thread never sees its buffer disappear.
//
// The registry knows its drainer (the writer) only through RingDrainer,
// which the life cycle hands it: the data flows from the rings up to the
// writer, never the includes.
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/record/thread_buffer.h"

namespace proflaunch {

struct RegisteredBuffer {
  ThreadBuffer ring;
  std::atomic<RegisteredBuffer*> next{nullptr};
  std::atomic<bool> retired{false};  // the thread exited; release-publishes its last records
  uint64_t mapping_bytes = 0;
};

// The calling thread's buffer; nullptr until its first record.
extern __thread __attribute__((tls_model("initial-exec"))) ThreadBuffer* tls_thread_buffer;

// The thread's next correlation id (record/emit.h, next_correlation_id());
// 0 until its first, which first_correlation_id_of_thread() gives.
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t tls_next_correlation_id;
uint64_t first_correlation_id_of_thread() noexcept;

// Who drains the rings. Cold calls only.
struct RingDrainer {
  // A thread's first record: the drainer starts if it does not run yet (a
  // process that records nothing runs none). False when it cannot: the
  // thread then stops recording.
  bool (*first_record)() noexcept;
  // A thread exited: its ring holds its last records. Async-signal-safe.
  void (*thread_exited)() noexcept;
};

// The slow path of the first record on a thread: maps and registers a buffer,
// records ThreadInfo, starts the writer if needed. nullptr when this thread
// cannot record (not recording, out of memory, profiler thread).
ThreadBuffer* attach_current_thread() noexcept;

// Registry set-up (pthread key for thread exit, the drainer); called once
// by the life cycle's start.
bool init_thread_registry(const RingDrainer& drainer) noexcept;

// Newest first. Writer only.
RegisteredBuffer* registry_first() noexcept;

// Unlinks and unmaps a retired, drained buffer. Writer only.
void registry_release(RegisteredBuffer* buffer) noexcept;

// Looks up the tid of a recording thread by its pthread_t (0 when unknown).
uint32_t registry_tid_of(pthread_t thread) noexcept;

// fork: the child keeps none of the parent's buffers (the parent's writer
// writes what they hold); the forking thread re-attaches on its next record.
void registry_lock_before_fork() noexcept;
void registry_unlock_after_fork_in_parent() noexcept;
void registry_reset_after_fork_in_child() noexcept;

}  // namespace proflaunch
