#include "preload/writer/writer.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <mutex>

#include "preload/base/clock.h"
#include "preload/base/fork_leftovers.h"
#include "preload/base/log.h"
#include "preload/config.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer_control.h"
#include "preload/writer/writer_tasks.h"
#include "preload/writer/writer_thread.h"

namespace proflaunch {

// The writer's internals: Control (writer_control.h) and the thread's work
// (writer_thread.h).
using namespace writer;

namespace {

// How long an exiting thread waits for a writer thread that never began.
constexpr uint64_t kThreadStartGraceNs = 1000000000u;
// Whether this thread's fork got the round (two threads may fork at once).
__thread __attribute__((tls_model("initial-exec"))) bool tls_round_held_for_fork = false;

// The Writer is never freed: a fork child may hold a copy of the pointer,
// and the process is ending anyway. Held here so that it stays reachable
// (LeakSanitizer in an ASan-built program would otherwise report it at exit
// and change the program's exit status); a fork child's new Writer keeps the
// parent's reachable too.
Writer* g_writer = nullptr;

void* writer_main(void* writer) {
  run_writer(*static_cast<Writer*>(writer));
  return nullptr;
}

}  // namespace

// ThreadSanitizer's runtime, when the program was built with it, and whether
// its options (read once at start, as TSan does) let a multi-threaded
// fork's child start threads.
extern "C" void __tsan_init() __attribute__((weak));
bool g_tsan_threads_after_fork = false;
__attribute__((constructor)) void read_tsan_options() {
  g_tsan_threads_after_fork = tsan_allows_threads_after_fork(std::getenv("TSAN_OPTIONS"));
}

bool writer_ensure_started() noexcept {
  if (g_control.running.load(std::memory_order_acquire)) return true;
  if (g_control.inline_ready.load(std::memory_order_acquire)) return true;
  // Taken before the control mutex: lock order is section before control.
  const SectionIdentity section = runtime::section();
  std::lock_guard<std::mutex> lock(g_control.mutex);
  if (g_control.running.load(std::memory_order_relaxed)) return true;
  if (g_control.start_failed || !runtime::active()) return false;

  Writer* writer = new_writer(section);
  if (writer == nullptr) {
    g_control.start_failed = true;
    warn_once(Warning::kWriterThread, "out of memory for the writer; not recording");
    return false;
  }

  if (g_writer != nullptr) keep_after_fork(&g_writer, sizeof g_writer);
  g_writer = writer;
  if (g_control.no_thread) {
    g_control.inline_ready.store(true, std::memory_order_release);
    return true;
  }

  // The thread inherits this mask: every signal blocked, SIGXFSZ included, so
  // a file size limit turns into EFBIG and no program handler runs on it.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  g_control.stop.store(false, std::memory_order_relaxed);
  g_control.thread_state.store(kThreadCreated, std::memory_order_relaxed);
  g_control.running.store(true, std::memory_order_release);
  // The new thread's start (its allocations in a sanitizer's runtime) counts
  // as a round, which the thread ends. Not waited for: a fork that holds the
  // round waits for the control mutex held here.
  uint32_t free_round = kRoundFree;
  const bool took_round =
      g_control.round.compare_exchange_strong(free_round, kRoundWriter, std::memory_order_acquire);
  pthread_t thread;
  const int error = pthread_create(&thread, &attributes, writer_main, writer);
  pthread_attr_destroy(&attributes);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (error != 0) {
    g_control.thread_state.store(kThreadNone, std::memory_order_relaxed);
    if (took_round) g_control.round.store(kRoundFree, std::memory_order_release);
    g_control.running.store(false, std::memory_order_release);
    g_control.start_failed = true;
    g_writer = nullptr;
    delete_writer(writer);
    warn_once(Warning::kWriterThread, "cannot start the writer thread; not recording");
    return false;
  }
  return true;
}

bool on_writer_thread() noexcept { return tls_on_writer_thread; }

void writer_wake() noexcept {
  const int saved_errno = errno;
  g_control.wake_word.fetch_add(1, std::memory_order_acq_rel);
  futex(&g_control.wake_word, FUTEX_WAKE_PRIVATE, 1, nullptr);
  errno = saved_errno;
}

namespace {
// A writer without a thread (Control::no_thread, or one that never began):
// the calling thread ends the section. Writing allocates and compresses: not
// from a crash's signal handler (kFlush), and once at a time.
bool end_section_inline(FlushGoal goal) noexcept {
  if (goal == FlushGoal::kFlush || g_control.inline_busy.exchange(true, std::memory_order_acq_rel))
    return false;
  const int saved_errno = errno;
  if (goal == FlushGoal::kStop) g_control.stop.store(true, std::memory_order_release);
  end_section_inline(*g_writer);
  g_control.inline_busy.store(false, std::memory_order_release);
  errno = saved_errno;
  return true;
}
}  // namespace

bool writer_flush_and_wait(FlushGoal goal, uint32_t timeout_ms) noexcept {
  if (tls_on_writer_thread) return false;  // the writer cannot wait for itself
  if (g_control.inline_ready.load(std::memory_order_acquire)) return end_section_inline(goal);
  if (!g_control.running.load(std::memory_order_acquire)) return false;
  const int saved_errno = errno;
  if (goal == FlushGoal::kEndSection) g_control.end_section.store(true, std::memory_order_release);
  if (goal == FlushGoal::kStop) g_control.stop.store(true, std::memory_order_release);
  const uint32_t ticket = g_control.requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  writer_wake();

  const uint64_t start_ns = now_ns();
  const uint64_t deadline_ns = start_ns + uint64_t{timeout_ms} * 1000000u;
  bool served = false;
  while (true) {
    const uint32_t completed = g_control.completed.load(std::memory_order_acquire);
    if (static_cast<int32_t>(completed - ticket) >= 0) {
      served = true;
      break;
    }
    if (!g_control.running.load(std::memory_order_acquire)) break;
    const uint64_t now = now_ns();
    if (goal != FlushGoal::kFlush && now - start_ns >= kThreadStartGraceNs &&
        g_control.thread_state.load(std::memory_order_acquire) == kThreadCreated) {
      uint32_t created = kThreadCreated;
      if (g_control.thread_state.compare_exchange_strong(created, kThreadAbandoned, std::memory_order_acq_rel)) {
        g_control.round.store(kRoundFree, std::memory_order_release);
        g_control.inline_ready.store(true, std::memory_order_release);
        g_control.running.store(false, std::memory_order_release);
        errno = saved_errno;
        return end_section_inline(goal);
      }
    }
    if (now >= deadline_ns) break;
    uint64_t wait_ns = deadline_ns - now;
    if (wait_ns > 10000000u) wait_ns = 10000000u;  // re-check `running` now and then
    const timespec timeout{0, static_cast<long>(wait_ns)};
    futex(&g_control.completed, FUTEX_WAIT_PRIVATE, completed, &timeout);
  }
  errno = saved_errno;
  return served;
}

void writer_request_dump(format::CaptureTrigger trigger) noexcept {
  uint8_t expected = 0;
  g_control.dump_request.compare_exchange_strong(expected, static_cast<uint8_t>(trigger),
                                                 std::memory_order_acq_rel);
  writer_wake();
}

void writer_request_flush() noexcept {
  g_control.flush_request.store(true, std::memory_order_release);
  writer_wake();
}

void writer_begin_section(const SectionIdentity& section) noexcept {
  {
    std::lock_guard<std::mutex> lock(g_control.mutex);
    g_control.pending_section = section;
    g_control.has_pending_section = true;
  }
  writer_wake();
}

bool writer_section_ended() noexcept {
  return g_control.section_ended.load(std::memory_order_acquire);
}

void writer_quiesce_before_fork() noexcept {
  g_control.fork_waiting.store(1, std::memory_order_release);
  const uint64_t deadline_ns = now_ns() + 100 * 1000000u;
  tls_round_held_for_fork = false;
  while (true) {
    uint32_t seen = kRoundFree;
    if (g_control.round.compare_exchange_strong(seen, kRoundFork, std::memory_order_acquire)) {
      tls_round_held_for_fork = true;
      return;
    }
    const uint64_t now = now_ns();
    if (now >= deadline_ns) return;  // fork without it rather than hang the program
    const uint64_t wait_ns = deadline_ns - now < 10000000u ? deadline_ns - now : 10000000u;
    const timespec step{0, static_cast<long>(wait_ns)};
    futex(&g_control.round, FUTEX_WAIT_PRIVATE, seen, &step);
  }
}

void writer_resume_after_fork_in_parent() noexcept {
  g_control.fork_waiting.store(0, std::memory_order_release);
  futex(&g_control.fork_waiting, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
  if (!tls_round_held_for_fork) return;
  tls_round_held_for_fork = false;
  g_control.round.store(kRoundFree, std::memory_order_release);
  futex(&g_control.round, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
}

void writer_lock_before_fork() noexcept { g_control.mutex.lock(); }

void writer_unlock_after_fork_in_parent() noexcept { g_control.mutex.unlock(); }

bool writer_register_task(const WriterTask* task) noexcept {
  for (auto& slot : g_tasks) {
    const WriterTask* expected = nullptr;
    if (slot.compare_exchange_strong(expected, task, std::memory_order_acq_rel)) return true;
    if (expected == task) return true;
  }
  // A bug of ours (more tasks than slots), never the program's: said, not silent.
  warn_once(Warning::kWriterThread, "internal: the writer's task table is full; some work of the shim is not done");
  return false;
}

namespace {
constexpr size_t kRuntimeCounters = 4;
constexpr uint64_t kRuntimeExitWaitNs = 200'000'000;  // the final cycle's wait for unfinished GPU work
constexpr uint32_t kRuntimeExitFlushTimeoutMs = 2000;
std::atomic<std::atomic<uint64_t>*> g_runtime_counters[kRuntimeCounters];

bool runtime_work_outstanding() noexcept {
  for (auto& slot : g_runtime_counters)
    if (std::atomic<uint64_t>* counter = slot.load(std::memory_order_acquire))
      if (counter->load(std::memory_order_acquire) != 0) return true;
  return false;
}

void resolve_runtime_work_at_exit() noexcept {
  const uint64_t deadline = now_ns() + kRuntimeExitWaitNs;
  while (writer_flush_and_wait(FlushGoal::kFlush, kRuntimeExitFlushTimeoutMs) && runtime_work_outstanding() &&
         now_ns() < deadline) {
    const timespec pause{0, 2'000'000};
    nanosleep(&pause, nullptr);
  }
}
}  // namespace

void writer_resolve_before_runtime_exit(std::atomic<uint64_t>* outstanding) noexcept {
  for (auto& slot : g_runtime_counters) {
    std::atomic<uint64_t>* expected = nullptr;
    if (slot.compare_exchange_strong(expected, outstanding, std::memory_order_acq_rel)) {
      // One handler per runtime: registered after that runtime's own.
      std::atexit(resolve_runtime_work_at_exit);
      return;
    }
    if (expected == outstanding) return;
  }
}

void writer_reset_after_fork_in_child() noexcept {
  for (auto& slot : g_tasks)
    if (const WriterTask* task = slot.load(std::memory_order_acquire)) task->reset_in_child();
  // The parent's writer state stays behind in the parent; the child starts
  // from nothing (no descriptor of the writer is held between writes).
  g_control.wake_word.store(0, std::memory_order_relaxed);
  g_control.requested.store(0, std::memory_order_relaxed);
  g_control.completed.store(0, std::memory_order_relaxed);
  g_control.end_section.store(false, std::memory_order_relaxed);
  g_control.stop.store(false, std::memory_order_relaxed);
  g_control.running.store(false, std::memory_order_relaxed);
  g_control.section_ended.store(false, std::memory_order_relaxed);
  g_control.dump_request.store(0, std::memory_order_relaxed);
  g_control.flush_request.store(false, std::memory_order_relaxed);
  g_control.start_failed = false;
  g_control.has_pending_section = false;
  g_control.no_thread = &__tsan_init != nullptr && !g_tsan_threads_after_fork;
  g_control.inline_ready.store(false, std::memory_order_relaxed);
  g_control.inline_busy.store(false, std::memory_order_relaxed);
  g_control.thread_state.store(kThreadNone, std::memory_order_relaxed);
  // No writer in the child: the round is free whether or not the fork got it.
  g_control.round.store(kRoundFree, std::memory_order_relaxed);
  g_control.fork_waiting.store(0, std::memory_order_relaxed);
  tls_round_held_for_fork = false;
  g_control.mutex.unlock();
}

}  // namespace proflaunch
