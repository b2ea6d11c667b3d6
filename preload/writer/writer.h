// The writer thread: drains every thread's ring, stages records into ~1 MiB
// Events chunks, compresses them (zstd level 1) and appends them to the
// section's part file, with the pending definitions ahead of them. It flushes
// at least once per flush interval, so a SIGKILL loses at most that window.
//
// All of its signals are blocked and it is guarded for life: nothing it does
// is recorded, and no signal handler of the program ever runs on it.
//
// Other threads talk to it through atomics and futexes only (no lock, no
// descriptor), so the synchronous requests below work from signal handlers,
// exec hooks and _exit alike.
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/state/section.h"

namespace proflaunch {

// Starts the thread on the first record of the process (or of a fork child).
bool writer_ensure_started() noexcept;

// True on the writer thread (which must never wait for itself).
bool on_writer_thread() noexcept;

// Wakes the writer early (a thread exited). Async-signal-safe.
void writer_wake() noexcept;

enum class FlushGoal : uint8_t {
  kFlush,       // everything committed so far reaches the file (crash)
  kEndSection,  // ... then SectionEnd; the section is over (exec)
  kStop,        // ... then the thread exits (process exit)
};

// Asks the writer to reach `goal` and waits at most `timeout_ms`. Returns true
// when it did. Returns false at once when no writer runs (nothing recorded).
// Async-signal-safe (atomics, futex, clock_gettime).
bool writer_flush_and_wait(FlushGoal goal, uint32_t timeout_ms) noexcept;

// Flight recorder (--ring): asks the writer to write out what it keeps, as a
// window named after `trigger` (the first request wins until it is served).
// Async-signal-safe; to wait for it, writer_flush_and_wait(kFlush) after.
// Nothing happens in streaming mode.
void writer_request_dump(format::CaptureTrigger trigger) noexcept;

// Asks for a flush after the writer's current (or next) cycle, without
// waiting (proflaunch ctl, from the writer thread itself).
void writer_request_flush() noexcept;

// After a failed exec: the writer, whose section ended, continues with `section`.
void writer_begin_section(const SectionIdentity& section) noexcept;

// Whether the writer ended its section and waits for a new one.
bool writer_section_ended() noexcept;

// fork: the child gets no writer (one starts on its first record), its own
// wake descriptor, and forgets the parent's part file.
//
// writer_quiesce_before_fork comes before every other lock of prepare_fork:
// it waits (at most 100 ms) for the writer to finish the round it is in, so
// the child is not forked while the writer is inside the allocator or zstd.
// glibc's malloc survives that, but the allocator of GCC 12's ASan runtime in
// an ASan-built program does not lock itself across fork, and such a child
// hangs at its first allocation. writer_resume_after_fork_in_parent comes
// after every other unlock; the child's reset releases it.
void writer_quiesce_before_fork() noexcept;
void writer_resume_after_fork_in_parent() noexcept;
void writer_lock_before_fork() noexcept;
void writer_unlock_after_fork_in_parent() noexcept;
void writer_reset_after_fork_in_child() noexcept;

}  // namespace proflaunch
