// What the writer thread and the threads that ask it for something share
// (writer.cpp, writer_thread.cpp): atomics and futex words, so that the
// requests of writer.h work from signal handlers, exec hooks and _exit
// alike. Internal to preload/writer.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "preload/state/section.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::writer {

// Shared between the writer and everyone who asks it for something.
struct Control {
  std::atomic<uint32_t> requested{0};
  std::atomic<uint32_t> completed{0};  // futex word: the newest request served
  std::atomic<bool> end_section{false};
  std::atomic<bool> stop{false};
  std::atomic<bool> running{false};
  std::atomic<bool> section_ended{false};
  // Flight recorder: a dump asked for (format::CaptureTrigger), 0 if none.
  std::atomic<uint8_t> dump_request{0};
  // Flush after this cycle (proflaunch ctl: a command's effect reaches the file).
  std::atomic<bool> flush_request{false};
  // Futex word the writer sleeps on between drains; bumped to wake it. A
  // futex, not an eventfd: no descriptor the program could close or reuse,
  // nothing to recreate after fork, and waking stays async-signal-safe.
  std::atomic<uint32_t> wake_word{0};
  // The writer's round of work, for fork (writer_quiesce_before_fork), a
  // futex word: kRoundFree, kRoundWriter (working between two sleeps, or its
  // thread starting), kRoundFork. fork_waiting makes the writer step aside
  // after a round so that a waiting fork gets in.
  std::atomic<uint32_t> round{0};
  std::atomic<uint32_t> fork_waiting{0};
  // A fork child of a program built with ThreadSanitizer may not start a
  // thread (TSan kills it: "starting new threads after multi-threaded fork is
  // not supported"). There the writer has no thread: records wait in the
  // rings (a full ring drops and counts) and the exiting or exec-ing thread
  // writes the section (writer_flush_and_wait).
  bool no_thread = false;
  std::atomic<bool> inline_ready{false};
  std::atomic<bool> inline_busy{false};
  // kThreadNone, kThreadCreated (pthread_create returned), kThreadRunning
  // (its code began), kThreadAbandoned: a thread that never began (seen in a
  // fork child of an ASan-built program forked while its own new threads
  // were registering: the child's next thread waits forever in the runtime)
  // is given up by the exiting thread, which writes the section itself.
  std::atomic<uint32_t> thread_state{0};
  // Guards starting the thread and handing over a new section. fork takes it.
  std::mutex mutex;
  bool start_failed = false;
  bool has_pending_section = false;
  SectionIdentity pending_section;
};
extern Control g_control;
// Control::round.
inline constexpr uint32_t kRoundFree = 0, kRoundWriter = 1, kRoundFork = 2;
// Control::thread_state.
inline constexpr uint32_t kThreadNone = 0, kThreadCreated = 1, kThreadRunning = 2, kThreadAbandoned = 3;

// True on the writer thread (set by the thread itself).
extern __thread __attribute__((tls_model("initial-exec"))) bool tls_on_writer_thread;

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) noexcept;
// Wakes every thread waiting for its request to be served (Control::completed).
void wake_waiters() noexcept;

// The tasks registered with writer_register_task, in registration order.
inline constexpr int kMaxTasks = 8;  // GPU timing (CUDA events, CUPTI, HIP), capture, control: room to spare
extern std::atomic<const WriterTask*> g_tasks[kMaxTasks];

}  // namespace proflaunch::writer
