#include "preload/cuda/gpu_timing_events.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>

#include "preload/base/clock.h"
#include "preload/base/fork_leftovers.h"
#include "preload/base/lazy_global.h"
#include "preload/cuda/capture_state.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/driver_services.h"
#include "preload/cuda/event_pool.h"
#include "preload/cuda/gpu_clock.h"
#include "preload/cuda/pending_operations.h"
#include "preload/record/definitions.h"
#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::cuda {
namespace {

// How long the last cycle of a section (exit, exec) waits for operations the
// GPU has not finished yet before counting them as unresolved.
constexpr uint64_t kFinalWaitNs = 200'000'000;
constexpr uint32_t kTeardownFlushTimeoutMs = 2000;

// Two threads submitting to one stream. Each operation is bracketed by its
// own start and end events, but the stream runs whatever was submitted in
// the order it was submitted: another thread's kernel queued between our
// start event and our end event would be measured as ours. So an
// asynchronous submission holds its stream's lock from its start event to
// its end event, and every other hooked call that puts work on a stream does
// the same (event records, waits: rows/stream_lock in the hooks). The lock
// is never held across a call that may block until the GPU is done (a
// synchronous copy): a thread waiting for it could be the one the GPU work
// waits for. Synchronous operations are instead bounded on the host side:
// their work ended before their call returned.
//
// Keyed by (context, stream) into a small table; two streams sharing a slot
// only serialize their submissions. Per-thread default streams are the
// calling thread's own and never need it.
constexpr size_t kSubmissionLocks = 64;
std::mutex g_submission_locks[kSubmissionLocks];

std::mutex* submission_lock_of(CUcontext context, CUstream stream) {
  if (stream == CU_STREAM_PER_THREAD) return nullptr;
  const uint64_t key = reinterpret_cast<uint64_t>(context) * 0x9E3779B97F4A7C15ull ^
                       reinterpret_cast<uint64_t>(stream);
  return &g_submission_locks[(key * 0x9E3779B97F4A7C15ull >> 58) & (kSubmissionLocks - 1)];
}

// Operations the writer holds that the GPU had not finished at its last
// pass: resolved before the driver's teardown at exit.
RuntimeWorkAtExit g_exit_work;
std::atomic<bool> g_note_requested{false};

class EventTiming final : public GpuTimingBackend {
 public:
  TimingToken before(CUstream stream, CUcontext context, Submission submission,
                     bool done_by_return) noexcept override {
    if (context == nullptr) return {};
    const uint32_t generation = ensure_context_clock(context);
    if (generation == 0) return {};
    g_exit_work.work_begins();
    CUevent start = nullptr, end = nullptr;
    if (!take_event_pair(context, &start, &end)) return {};
    std::mutex* lock = submission == Submission::kAsynchronous ? submission_lock_of(context, stream) : nullptr;
    if (lock != nullptr) lock->lock();
    const uint64_t start_recorded_ns = now_ns();
    if (driver_services().event_record(start, stream) != CUDA_SUCCESS) {
      if (lock != nullptr) lock->unlock();
      return_event_pair(context, start, end);
      // The context the shim believes current may not be (changed behind its back).
      forget_current_context();
      return {};
    }
    TimingToken token{this, start, end, context, lock, start_recorded_ns, now_ns(), 0, generation, done_by_return,
                      submission};
    return token;
  }

  void returned(TimingToken& token, CUstream stream, bool submitted) noexcept override {
    if (token.start == nullptr) return;
    token.returned_ns = now_ns();
    const bool recorded = submitted && driver_services().event_record(static_cast<CUevent>(token.end), stream) == CUDA_SUCCESS;
    if (token.submission_lock != nullptr) static_cast<std::mutex*>(token.submission_lock)->unlock();
    token.submission_lock = nullptr;
    if (!recorded) {
      release(token);
      token.start = nullptr;
    }
  }

  void queue(const TimingToken& token, const GpuOperation& op) noexcept override {
    if (token.start == nullptr) {
      count_untimed_operation();
      return;
    }
    // Pushed after the record was committed: the writer's snapshot rule then
    // keeps the GpuActivity behind its record in the file.
    // Not a library frame's launch: it is timed from the library call's
    // arrival on the stream on purpose (library_frame.h).
    // A kernel launch only: its call's head may load the kernel's module
    // (lazy loading); a graph launch's was loaded when it was instantiated,
    // and a slow host (ASan) makes its calls long without any head.
    const bool launch = op.kind == format::GpuActivityKind::kKernel;
    push_pending_operation(PendingOperation{static_cast<CUevent>(token.start), static_cast<CUevent>(token.end),
                                            static_cast<CUcontext>(token.context), token.start_recorded_ns,
                                            token.submitted_ns, token.returned_ns, op.correlation_id, op.stream, op.device,
                                            token.clock_generation, op.kind, token.done_by_return,
                                            launch && token.submission == Submission::kAsynchronous,
                                            token.submission == Submission::kLibraryFrame});
  }

  void release(const TimingToken& token) noexcept override {
    if (token.start == nullptr) return;
    if (token.submission_lock != nullptr) static_cast<std::mutex*>(token.submission_lock)->unlock();
    return_event_pair(static_cast<CUcontext>(token.context), static_cast<CUevent>(token.start),
                      static_cast<CUevent>(token.end));
  }

  void* lock_submissions(CUcontext context, CUstream stream) noexcept override {
    std::mutex* lock = submission_lock_of(context, stream);
    if (lock != nullptr) lock->lock();
    return lock;
  }

  void unlock_submissions(void* lock) noexcept override {
    if (lock != nullptr) static_cast<std::mutex*>(lock)->unlock();
  }

  void before_context_teardown(CUcontext) noexcept override {
    // Let the writer resolve everything already complete while the events
    // still exist.
    writer_flush_and_wait(FlushGoal::kFlush, kTeardownFlushTimeoutMs);
  }

  void after_context_teardown(CUcontext context, bool destroyed) noexcept override {
    if (!destroyed) return;
    forget_context_clock(context);
    forget_context_events(context);
  }
};

constinit EventTiming g_backend;

// ---- the writer side

struct Unresolved {
  uint64_t count = 0;
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;
  void add(uint64_t n, uint64_t at_ns) {
    if (n == 0) return;
    if (count == 0) first_ns = at_ns;
    count += n;
    last_ns = at_ns;
  }
};

// Owned by the writer thread.
constinit LazyGlobal<std::deque<PendingOperation>> g_waiting;

struct StreamKey {
  CUcontext context;
  uint64_t stream;
};

// The end of the last operation resolved on each stream (writer thread),
// direct-mapped: a stream whose slot another took only loses this clamp.
struct LastEnd {
  CUcontext context;
  uint64_t stream;
  uint64_t end_ns;
};
constexpr size_t kLastEndSlots = 256;
LastEnd g_last_end[kLastEndSlots];

LastEnd& last_end_slot(CUcontext context, uint64_t stream) {
  const uint64_t key = (reinterpret_cast<uint64_t>(context) ^ stream) * 0x9E3779B97F4A7C15ull;
  return g_last_end[key >> 56];
}

// A kernel launch call this long did more than submit (a launch takes a few
// microseconds): loading the kernel's module on a first launch with lazy
// loading, JIT-compiling PTX. That is its head, before the submission.
constexpr uint64_t kLongLaunchCallNs = 50'000;

// The bounds event times alone do not give (docs/limits.md, "GPU time
// without CUPTI"): the work cannot start before the call that submitted it
// began, nor before the previous operation of its stream ended; and a launch
// still running when its call returned began close to that return.
void clamp_times(const PendingOperation& op, ResolvedTimes& times) {
  // The start event completes as soon as the stream reaches it; on an idle
  // stream that is before the real call even began, but the work cannot
  // start before it was submitted.
  if (times.start_ns < op.submitted_ns) times.start_ns = op.submitted_ns;
  // A launch call returns once its work is queued, after a head that can
  // take milliseconds (lazy module loading on a first launch, JIT) and a
  // short tail. The start event, reached at once on an idle stream, dates
  // the head's beginning. After a long call the return is the better start:
  // off by the call's tail after it submitted (microseconds), not by its
  // head; work that ended before its end event was recorded (right after
  // the return) ended about then. A short call keeps the start it has: off
  // by its head, microseconds too, and never late.
  if (op.starts_by_return && op.returned_ns - op.submitted_ns > kLongLaunchCallNs)
    times.start_ns = std::max(times.start_ns, std::min(op.returned_ns, times.end_ns));
  // Stream order: not before the operation before it ended, where the clock
  // mapping of two resolutions put them a microsecond apart. Only when that
  // end lies before this one's (threads sharing a stream hand their
  // operations over in any order), and not for a library call's launch,
  // which holds the library's earlier work on purpose.
  LastEnd& last = last_end_slot(op.context, op.stream);
  if (!op.timed_from_arrival && last.context == op.context && last.stream == op.stream &&
      last.end_ns > times.start_ns && last.end_ns <= times.end_ns)
    times.start_ns = last.end_ns;
  // An operation documented to be complete when its call returns was
  // done by then; another thread's work queued behind it (a synchronous
  // call holds no submission lock) may have delayed its end event.
  if (op.done_by_return && op.returned_ns != 0 && times.end_ns > op.returned_ns) times.end_ns = op.returned_ns;
  if (times.end_ns < times.start_ns) times.end_ns = times.start_ns;
  last = LastEnd{op.context, op.stream, times.end_ns};
}

bool is_blocked(const std::deque<StreamKey>& blocked, const PendingOperation& op) {
  for (const StreamKey& key : blocked)
    if (key.context == op.context && key.stream == op.stream) return true;
  return false;
}

void emit_activity(WriterRecordSink& sink, const PendingOperation& op, const ResolvedTimes& times) {
  format::GpuActivityRecord record{};
  record.header = format::header_for<format::GpuActivityRecord>();
  record.device = op.device;
  record.correlation_id = op.correlation_id;
  record.start_ns = times.start_ns;
  record.end_ns = times.end_ns;
  record.stream = op.stream;
  record.kind = static_cast<uint8_t>(op.kind);
  record.source = static_cast<uint8_t>(format::GpuTimingSource::kEvents);
  sink.append(&record, sizeof record);
}

// One pass over the waiting operations: resolves the complete ones. An
// operation not yet complete blocks the later ones of its stream for this
// pass (a stream runs in order).
void resolve_ready(WriterRecordSink& sink, Unresolved& unresolved) {
  const DriverServices& driver = driver_services();
  std::deque<StreamKey> blocked;
  CUcontext current = nullptr;
  for (auto it = g_waiting->begin(); it != g_waiting->end();) {
    const PendingOperation& op = *it;
    if (is_blocked(blocked, op)) {
      ++it;
      continue;
    }
    if (!context_clock_alive(op.context, op.clock_generation)) {
      unresolved.add(1, op.submitted_ns);  // its context was destroyed first
      it = g_waiting->erase(it);
      continue;
    }
    if (op.context != current) {
      if (driver.ctx_set_current(op.context) != CUDA_SUCCESS) {
        ++it;
        continue;
      }
      current = op.context;
    }
    const CUresult ready = driver.event_query(op.end);
    if (ready == CUDA_ERROR_NOT_READY) {
      blocked.push_back(StreamKey{op.context, op.stream});
      ++it;
      continue;
    }
    ResolvedTimes times{};
    if (ready == CUDA_SUCCESS && resolve_operation_times(op.context, op.clock_generation, op.start, op.end,
                                                         op.start_recorded_ns, &times)) {
      clamp_times(op, times);
      emit_activity(sink, op, times);
    } else {
      unresolved.add(1, op.submitted_ns);
    }
    release_event(op.context, op.start);
    release_event(op.context, op.end);
    it = g_waiting->erase(it);
  }
}

void before_drain() noexcept { snapshot_pending_operations(); }

void run(WriterRecordSink& sink, bool final) noexcept {
  if (g_note_requested.exchange(false, std::memory_order_acq_rel)) {
    format::GpuTimingInfoRecord info{};
    info.header = format::header_for<format::GpuTimingInfoRecord>();
    info.source = static_cast<uint8_t>(format::GpuTimingSource::kEvents);
    info.requested = static_cast<uint8_t>(format::GpuTimingRequest::kEvents);
    info.reason_string = intern_string("");
    info.at_ns = now_ns();
    sink.append(&info, sizeof info);
  }
  take_pending_operations([](const PendingOperation& op) { g_waiting->push_back(op); });
  // The writer's event queries and synchronizations must never invalidate a
  // program thread's capture (capture_state.h): relaxed before its first
  // driver call (there is none while nothing waits).
  if (!g_waiting->empty()) relax_this_thread();
  Unresolved unresolved;
  unresolved.add(take_queue_overflow_count(), now_ns());
  if (!g_waiting->empty()) {
    refresh_context_clocks(now_ns());
    resolve_ready(sink, unresolved);
  }
  if (final) {
    const uint64_t deadline = now_ns() + kFinalWaitNs;
    while (!g_waiting->empty() && now_ns() < deadline) {
      timespec pause{0, 1'000'000};
      nanosleep(&pause, nullptr);
      resolve_ready(sink, unresolved);
    }
    for (const PendingOperation& op : *g_waiting) unresolved.add(1, op.submitted_ns);
    g_waiting->clear();
  }
  g_exit_work.set_outstanding(g_waiting->size());
  if (unresolved.count != 0) {
    format::LostRecord lost{};
    lost.header = format::header_for<format::LostRecord>();
    lost.reason = static_cast<uint32_t>(format::LostReason::kGpuTimingUnresolved);
    lost.first_ns = unresolved.first_ns;
    lost.last_ns = unresolved.last_ns;
    lost.count = unresolved.count;
    sink.append(&lost, sizeof lost);
  }
}

void reset_in_child() noexcept {
  // The parent's contexts, events and queues mean nothing in a fork child,
  // and a submission lock another thread held at the fork stays held.
  for (std::mutex& lock : g_submission_locks) new (&lock) std::mutex();
  for (LastEnd& last : g_last_end) last = LastEnd{};
  g_exit_work.set_outstanding(0);
  restart_after_fork(*g_waiting);
  reset_pending_operations_after_fork();
  reset_event_pool_after_fork();
  reset_context_clocks_after_fork();
}

const WriterTask kTask{before_drain, run, reset_in_child};

}  // namespace

void note_events_requested() noexcept { g_note_requested.store(true, std::memory_order_release); }

GpuTimingBackend* event_timing_backend() noexcept {
  static const bool registered = writer_register_task(&kTask);
  return registered ? &g_backend : nullptr;
}

}  // namespace proflaunch::cuda
