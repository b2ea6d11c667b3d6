// Which threads record: each recording thread owns one ThreadBuffer (and its
// ring) in one anonymous mapping, created on the thread's first record and
// linked into a list the writer walks.
//
// Ownership: the list only grows at its head (under the registry mutex);
// buffers are unlinked and unmapped only by the writer, after their thread
// exited (retired) and their ring is empty. So the writer walks the list
// without a lock, and a thread never sees its buffer disappear.
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

// The slow path of the first record on a thread: maps and registers a buffer,
// records ThreadInfo, starts the writer if needed. nullptr when this thread
// cannot record (not recording, out of memory, profiler thread).
ThreadBuffer* attach_current_thread() noexcept;

// Registry set-up (pthread key for thread exit); called once by the runtime.
bool init_thread_registry() noexcept;

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
