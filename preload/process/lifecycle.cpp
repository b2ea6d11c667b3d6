#include "preload/process/lifecycle.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "preload/base/clock.h"
#include "preload/base/log.h"
#include "preload/control/capture_control.h"
#include "preload/control/control_client.h"
#include "preload/process/crash_signals.h"
#include "preload/record/definitions.h"
#include "preload/record/early_counts.h"
#include "preload/record/thread_registry.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer.h"

namespace proflaunch::runtime {
namespace {

// Bounded waits for the writer: long enough to compress and write every ring
// at once (a few hundred MB/s), short enough that a hung file system cannot
// hang the program's exit or exec for long.
constexpr uint32_t kExitFlushTimeoutMs = 5000;
constexpr uint32_t kExecFlushTimeoutMs = 3000;

std::atomic<bool> g_fork_handlers_registered{false};
// Whether finish() flushed: waited for by a second thread that finishes
// while the first one flushes (set once the state is kFinished by a CAS, so
// a thread that sees kFinished before the flush ends waits for it).
constexpr int kFinishNotDone = 0, kFinishDone = 1;
std::atomic<int> g_finish_stage{kFinishNotDone};
// Whether the prepare handler took the locks (the state can change between
// prepare and parent/child only through this thread).
bool g_fork_locked = false;

// fork while another thread holds one of these locks (the writer handing
// over a chunk, a hook defining a name) would leave it locked forever in the
// child: take them all first, and release them on both sides. The writer
// holds each only for short copies, never while writing; the writer round,
// held while writing, fork waits for with a bound (writer.h).
//
// Lock order, everywhere: writer round, capture, live set, definitions,
// section, registry, writer control.
// No code holds one of them while taking one earlier in this list.
void prepare_fork() {
  g_fork_locked = g_state.load(std::memory_order_acquire) != State::kOff;
  if (!g_fork_locked) return;
  writer_quiesce_before_fork();
  capture::lock_before_fork();
  definitions_lock_before_fork();
  section_lock_before_fork();
  registry_lock_before_fork();
  writer_lock_before_fork();
}

void after_fork_in_parent() {
  if (!g_fork_locked) return;
  writer_unlock_after_fork_in_parent();
  registry_unlock_after_fork_in_parent();
  section_unlock_after_fork();
  definitions_unlock_after_fork();
  capture::unlock_after_fork_in_parent();
  writer_resume_after_fork_in_parent();
}

void after_fork_in_child() {
  // No flush of the parent's goes on in the child: a child forked while the
  // parent finished must not wait for it.
  g_finish_stage.store(state() == State::kFinished ? kFinishDone : kFinishNotDone, std::memory_order_relaxed);
  if (!g_fork_locked) return;
  forget_counts_before_start_in_child();  // the parent writes them
  writer_reset_after_fork_in_child();
  registry_reset_after_fork_in_child();
  set_section_in_fork_child(make_section_identity(format::kProcessForked, section_id()));
  section_unlock_after_fork();
  definitions_unlock_after_fork();
  definitions_begin_section();
  capture::after_fork_in_child();
  control::after_fork_in_child();
}

}  // namespace

bool start(const Config& config) noexcept {
  if (g_state.load(std::memory_order_acquire) != State::kOff) return true;
  g_config = config;
  init_tick_source();
  // Whatever follows, calls are no longer counted as made before the start
  // (record/early_counts.h): from here the rows record, count or pass
  // through as configured. This thread makes no hooked call until the state
  // is set below.
  end_counting_before_start();

  if (g_config.parts_dir[0] == '\0') {
    if (g_config.verbose)
      print_line(kEnvPartsDir, " is not set: not recording (run the program under proflaunch)");
    return false;
  }
  if (access(g_config.parts_dir, W_OK | X_OK) != 0) {
    warn_once(Warning::kPartsDir, "cannot write to ", g_config.parts_dir, "; not recording");
    return false;
  }

  const uint32_t pid = static_cast<uint32_t>(getpid());
  uint32_t flags = 0;
  uint64_t parent_section = 0;
  if (g_config.exec_parent_pid == pid) {
    flags = format::kProcessAfterExec;
    parent_section = g_config.exec_parent_section;
  } else if (g_config.exec_parent_pid == static_cast<uint32_t>(getppid())) {
    parent_section = g_config.exec_parent_section;  // spawned through vfork + exec
  }
  set_section(make_section_identity(flags, parent_section));

  // The writer drains the rings: it starts on the first record and wakes
  // when a thread exits.
  if (!init_thread_registry(RingDrainer{writer_ensure_started, writer_wake})) {
    warn_once(Warning::kOutOfMemory, "cannot create a thread key; not recording");
    return false;
  }
  // Registered once per process image: handlers survive into fork children.
  if (!g_fork_handlers_registered.exchange(true))
    pthread_atfork(prepare_fork, after_fork_in_parent, after_fork_in_child);
  install_crash_handlers();

  // Outside a capture window from the start unless the whole run is recorded.
  const bool paused = capture::starts_paused(g_config.capture);
  g_state.store(paused ? State::kPaused : State::kRecording, std::memory_order_release);
  count_while_paused(paused);
  // What the constructors that ran before ours counted is written by the
  // writer, started now so that it is written even if the program records
  // nothing else (outside a window: with the window's first records).
  if (!paused && has_counts_before_start()) writer_ensure_started();
  capture::start(g_config.capture);
  control::start_client(g_config);
  return true;
}

// Another thread is finishing (two threads exiting at once): whichever
// returns first ends the process, so wait for its flush, bounded.
void wait_for_other_finish() noexcept {
  const uint64_t deadline = now_ns() + uint64_t{kExitFlushTimeoutMs} * 1000000u;
  while (g_finish_stage.load(std::memory_order_acquire) != kFinishDone && now_ns() < deadline) {
    const timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
}

void finish() noexcept {
  if (!owns_this_process()) return;
  if (state() == State::kFinished) return wait_for_other_finish();
  if (!active()) return;
  capture::before_section_end(format::CaptureTrigger::kExit);
  State expected = state();
  while ((expected == State::kRecording || expected == State::kPaused) &&
         !g_state.compare_exchange_weak(expected, State::kFinished)) {
  }
  if (expected != State::kRecording && expected != State::kPaused) {
    if (expected == State::kFinished) wait_for_other_finish();
    return;
  }
  count_while_paused(false);  // calls after the last window are not written
  writer_flush_and_wait(FlushGoal::kStop, kExitFlushTimeoutMs);
  control::at_exit();
  g_finish_stage.store(kFinishDone, std::memory_order_release);
}

void before_exec() noexcept {
  if (!active() || !owns_this_process()) return;
  capture::before_section_end(format::CaptureTrigger::kExec);
  writer_flush_and_wait(FlushGoal::kEndSection, kExecFlushTimeoutMs);
}

void after_failed_exec() noexcept {
  if (!active() || !owns_this_process() || !writer_section_ended()) return;
  const SectionIdentity next = make_section_identity(0, section_id());
  set_section(next);
  writer_begin_section(next);
}

}  // namespace proflaunch::runtime
