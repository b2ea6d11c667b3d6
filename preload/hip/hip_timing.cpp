#include "preload/hip/hip_timing.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <new>
#include <vector>

#include "preload/base/clock.h"
#include "preload/base/event_anchors.h"
#include "preload/base/fork_leftovers.h"
#include "preload/config.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/hip/hip_services.h"
#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::hip {
namespace {

constexpr int kMaxDevices = 64;
constexpr uint64_t kFinalWaitNs = 200'000'000;

struct Pending {
  HipTimingToken token;
  uint64_t correlation_id;
  uint64_t stream;
  int32_t device;
  format::GpuActivityKind kind;
};

// A device's clock: its anchors (base/event_anchors.h), taken on a private
// non-blocking stream, so that the program's work queued on the device does
// not delay them.
constexpr int kAnchorsKept = 16;
using Anchors = EventAnchors<hipEvent_t, kAnchorsKept>;
struct DeviceClock {
  hipStream_t stream = nullptr;
  Anchors anchors;
};

std::mutex g_mutex;  // guards the pool, the clocks and the queue
std::vector<hipEvent_t>* g_pool[kMaxDevices];
constinit DeviceClock g_clocks[kMaxDevices]{};
std::deque<Pending>* g_queue;
std::atomic<int> g_captures{0};
std::atomic<uint64_t> g_untimed{0};  // work that runs without events: counted as unresolved

// Owned by the writer thread.
std::deque<Pending>* g_waiting;
// Its size after the writer's last pass: resolved before the runtime's own
// teardown at exit takes the events.
RuntimeWorkAtExit g_exit_work;
uint64_t g_unresolved = 0, g_unresolved_first_ns = 0, g_unresolved_last_ns = 0;

std::vector<hipEvent_t>& pool(int ordinal) {
  if (g_pool[ordinal] == nullptr) g_pool[ordinal] = new std::vector<hipEvent_t>();
  return *g_pool[ordinal];
}

// Caller holds g_mutex, on a thread whose device is `ordinal`. A new anchor
// for the device's clock; its private stream is made the first time.
bool add_anchor(const HipServices& hip, int ordinal) {
  DeviceClock& clock = g_clocks[ordinal];
  if (clock.anchors.empty() && clock.stream == nullptr && hip.stream_create_with_flags != nullptr &&
      hip.stream_create_with_flags(&clock.stream, hipStreamNonBlocking) != hipSuccess)
    clock.stream = nullptr;
  Anchors::Anchor best{};
  const auto destroy = [&](hipEvent_t event) { hip.event_destroy(event); };
  if (!take_anchor(
          best, [&](hipEvent_t* event) { return hip.event_create_with_flags(event, hipEventDefault) == hipSuccess; },
          [&](hipEvent_t event) {
            return hip.event_record(event, clock.stream) == hipSuccess && hip.event_synchronize(event) == hipSuccess;
          },
          destroy, [] { return now_ns(); }))
    return false;
  if (hipEvent_t evicted = clock.anchors.keep(best)) destroy(evicted);
  return true;
}

// Caller holds g_mutex. The device's first anchor, on first use.
bool ensure_anchor(const HipServices& hip, int ordinal) {
  return !g_clocks[ordinal].anchors.empty() || add_anchor(hip, ordinal);
}

// Writer: a fresh anchor on each device in use whose newest is a second old.
void refresh_anchors(const HipServices& hip) {
  const uint64_t now = now_ns();
  std::lock_guard lock(g_mutex);
  for (int ordinal = 0; ordinal < kMaxDevices; ++ordinal) {
    DeviceClock& clock = g_clocks[ordinal];
    if (clock.anchors.empty() || !clock.anchors.due(now)) continue;
    if (hip.set_device(ordinal) != hipSuccess) continue;
    add_anchor(hip, ordinal);
  }
}

bool take_event(const HipServices& hip, int ordinal, hipEvent_t* event) {
  std::vector<hipEvent_t>& events = pool(ordinal);
  if (!events.empty()) {
    *event = events.back();
    events.pop_back();
    return true;
  }
  return hip.event_create_with_flags(event, hipEventDefault) == hipSuccess;
}

void give_back(int ordinal, hipEvent_t start, hipEvent_t end) {
  std::lock_guard lock(g_mutex);
  if (start != nullptr) pool(ordinal).push_back(start);
  if (end != nullptr) pool(ordinal).push_back(end);
}

// Two threads submitting to one stream: another thread's work queued between
// our start and end events would be measured as ours, so an asynchronous
// submission holds its stream's lock from its start event to its end event
// (as preload/cuda/gpu_timing_events.cpp does, and for the same reason never
// across a call that may block). Keyed by stream into a small table.
constexpr size_t kSubmissionLocks = 64;
std::mutex g_submission_locks[kSubmissionLocks];

std::mutex* submission_lock_of(hipStream_t stream) {
  if (stream == hipStreamPerThread) return nullptr;
  const uint64_t key = reinterpret_cast<uint64_t>(stream) * 0x9E3779B97F4A7C15ull;
  return &g_submission_locks[(key >> 58) & (kSubmissionLocks - 1)];
}

bool capturing(const HipServices& hip, hipStream_t stream) {
  if (g_captures.load(std::memory_order_relaxed) == 0) return false;
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  return hip.stream_is_capturing(stream, &status) != hipSuccess || status != hipStreamCaptureStatusNone;
}

void count_unresolved(uint64_t at_ns) {
  if (g_unresolved++ == 0) g_unresolved_first_ns = at_ns;
  g_unresolved_last_ns = at_ns;
}

// The operation's end from the newest anchor known before its submission,
// and its start as the end less the events' own distance: the same as the
// start event's distance from the anchor when both were recorded on the
// stream, and, for a kernel's dispatch events, the kernel's own duration on
// runtimes whose extended launch binds both to the kernel (HIP 5.5 and later)
// as on HIP 5.2, which records the start as a marker right before the
// dispatch packet. The end event was stamped after the submission began: the
// bound that corrects an early anchor (base/event_anchors.h).
bool operation_times(const HipServices& hip, const HipTimingToken& token, uint64_t* start_ns, uint64_t* end_ns) {
  Anchors::Anchor anchor;
  {
    std::lock_guard lock(g_mutex);
    const Anchors& anchors = g_clocks[token.ordinal].anchors;
    if (anchors.empty()) return false;
    anchor = anchors.for_submission(token.submitted_ns);
  }
  float since_anchor_ms = 0, ms = 0;
  if (hip.event_elapsed_time(&since_anchor_ms, anchor.event, token.end) != hipSuccess ||
      hip.event_elapsed_time(&ms, token.start, token.end) != hipSuccess)
    return false;
  const uint64_t anchor_was_ns = anchor.host_ns;
  *end_ns = anchored_time(anchor.host_ns, static_cast<double>(since_anchor_ms) * 1e6, token.submitted_ns);
  if (anchor.host_ns != anchor_was_ns) {
    std::lock_guard lock(g_mutex);
    g_clocks[token.ordinal].anchors.raise(anchor.event, anchor.host_ns);
  }
  const double duration_ns = static_cast<double>(ms) * 1e6;
  *start_ns = duration_ns <= 0 ? *end_ns
              : duration_ns >= static_cast<double>(*end_ns) ? 0
                                                            : *end_ns - static_cast<uint64_t>(duration_ns);
  return true;
}

// A kernel launch call this long did more than submit (a launch takes a few
// microseconds): on a first launch HIP loads the kernel's code object before
// it queues the dispatch. A bracketed launch's start event, reached at once
// on an idle stream, dates the call's beginning; after a long call its
// return is the better start: late by the call's tail after it queued the
// dispatch (microseconds), not early by its head (milliseconds). A short
// call keeps its start: early by its head, at most this long. The same rule
// as preload/cuda/gpu_timing_events.cpp's for CUDA without CUPTI.
constexpr uint64_t kLongLaunchCallNs = 50'000;

// The end of the newest operation resolved on each stream (writer thread
// only; a small direct-mapped table: a stream that collides loses its clamp,
// nothing else).
struct StreamEnd {
  uint64_t stream;
  uint64_t end_ns;
};
constexpr size_t kStreamEnds = 256;
StreamEnd g_stream_ends[kStreamEnds];

StreamEnd& stream_end_slot(uint64_t stream) {
  return g_stream_ends[(stream * 0x9E3779B97F4A7C15ull) >> 56];
}

// An operation started no earlier than the operation before it on its
// stream ended (streams run in order), if that one came before it at all:
// operations of two threads on one stream may be queued here out of order.
uint64_t clamp_to_stream(uint64_t stream, uint64_t start_ns, uint64_t end_ns) {
  const StreamEnd& previous = stream_end_slot(stream);
  if (previous.stream == stream && start_ns < previous.end_ns && previous.end_ns <= end_ns) return previous.end_ns;
  return start_ns;
}

void note_stream_end(uint64_t stream, uint64_t end_ns) {
  StreamEnd& slot = stream_end_slot(stream);
  if (slot.stream != stream || slot.end_ns < end_ns) slot = {stream, end_ns};
}

void resolve(WriterRecordSink& sink, bool final) {
  const HipServices& hip = hip_services();
  std::vector<uint64_t> blocked;
  for (auto it = g_waiting->begin(); it != g_waiting->end();) {
    const Pending& p = *it;
    bool is_blocked = false;
    for (uint64_t s : blocked) is_blocked = is_blocked || s == p.stream;
    if (is_blocked) {
      ++it;
      continue;
    }
    const hipError_t ready = hip.event_query(p.token.end);
    if (ready == hipErrorNotReady && !final) {
      blocked.push_back(p.stream);
      ++it;
      continue;
    }
    uint64_t start_ns = 0, end_ns = 0;
    if (ready == hipSuccess && operation_times(hip, p.token, &start_ns, &end_ns)) {
      // A bracketed operation's start event may complete before its call
      // submitted it; an operation's start computed from its duration may
      // fall a nanosecond before the previous end (float milliseconds).
      // Events in the kernel's own dispatch measure its duration exactly:
      // what only the mapping to host time got wrong moves it whole.
      const uint64_t duration_ns = end_ns > start_ns ? end_ns - start_ns : 0;
      if (start_ns < p.token.submitted_ns) start_ns = p.token.submitted_ns;
      if (p.token.starts_by_return && p.token.returned_ns - p.token.submitted_ns > kLongLaunchCallNs)
        start_ns = std::max(start_ns, std::min(p.token.returned_ns, end_ns));
      start_ns = clamp_to_stream(p.stream, start_ns, p.token.in_dispatch ? start_ns + duration_ns : end_ns);
      if (p.token.in_dispatch) end_ns = std::max(end_ns, start_ns + duration_ns);
      if (p.token.done_by_return && end_ns > p.token.returned_ns) end_ns = p.token.returned_ns;
      if (end_ns < start_ns) end_ns = start_ns;
      note_stream_end(p.stream, end_ns);
      format::GpuActivityRecord record{};
      record.header = format::header_for<format::GpuActivityRecord>();
      record.device = p.device;
      record.correlation_id = p.correlation_id;
      record.start_ns = start_ns;
      record.end_ns = end_ns;
      record.stream = p.stream;
      record.kind = static_cast<uint8_t>(p.kind);
      record.source = static_cast<uint8_t>(format::GpuTimingSource::kEvents);
      sink.append(&record, sizeof record);
    } else if (ready == hipErrorNotReady) {
      ++it;
      continue;
    } else {
      count_unresolved(p.token.submitted_ns);
    }
    give_back(p.token.ordinal, p.token.start, p.token.end);
    it = g_waiting->erase(it);
  }
}

// Before the writer drains the threads' records: the operations queued so
// far have committed records, which this cycle writes first, so their
// GpuActivity records follow them in the file.
void before_drain() noexcept {
  std::lock_guard lock(g_mutex);
  if (g_queue == nullptr) return;
  for (const Pending& p : *g_queue) g_waiting->push_back(p);
  g_queue->clear();
}

void run(WriterRecordSink& sink, bool final) noexcept {
  for (uint64_t n = g_untimed.exchange(0); n > 0; --n) count_unresolved(now_ns());
  const HipServices& hip = hip_services();
  if (hip.complete) {
    // Queries and anchor waits from this thread must never invalidate a
    // program's capture.
    static thread_local bool relaxed = false;
    if (!relaxed) {
      hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
      hip.thread_exchange_stream_capture_mode(&mode);
      relaxed = true;
    }
    if (!final) refresh_anchors(hip);
  }
  if (!g_waiting->empty()) {
    resolve(sink, false);
    if (final) {
      const uint64_t deadline = now_ns() + kFinalWaitNs;
      while (!g_waiting->empty() && now_ns() < deadline) {
        timespec pause{0, 1'000'000};
        nanosleep(&pause, nullptr);
        resolve(sink, false);
      }
      for (const Pending& p : *g_waiting) count_unresolved(p.token.submitted_ns);
      g_waiting->clear();
    }
  }
  g_exit_work.set_outstanding(g_waiting->size());
  if (g_unresolved != 0) {
    format::LostRecord lost{};
    lost.header = format::header_for<format::LostRecord>();
    lost.reason = static_cast<uint32_t>(format::LostReason::kGpuTimingUnresolved);
    lost.first_ns = g_unresolved_first_ns;
    lost.last_ns = g_unresolved_last_ns;
    lost.count = g_unresolved;
    sink.append(&lost, sizeof lost);
    g_unresolved = 0;
  }
}

void reset_in_child() noexcept {
  new (&g_mutex) std::mutex();
  for (std::mutex& lock : g_submission_locks) new (&lock) std::mutex();
  for (int i = 0; i < kMaxDevices; ++i) {
    keep_after_fork(&g_pool[i], sizeof g_pool[i]);
    g_pool[i] = nullptr;
    g_clocks[i] = DeviceClock{};  // the parent's events and streams
  }
  g_queue = new std::deque<Pending>();
  g_waiting = new std::deque<Pending>();
  g_unresolved = 0;
  for (StreamEnd& slot : g_stream_ends) slot = {};
  g_exit_work.set_outstanding(0);
}

const WriterTask kTask{before_drain, run, reset_in_child};

bool registered() noexcept {
  static const bool ok = [] {
    g_queue = new std::deque<Pending>();
    g_waiting = new std::deque<Pending>();
    return writer_register_task(&kTask);
  }();
  return ok;
}

}  // namespace

// HIP work is timed by events unless GPU timing is off (--gpu-timing=none):
// `events`, `cupti` and `auto` all mean events here.
bool hip_timing_enabled() noexcept { return cuda::gpu_timing_enabled() && registered(); }

namespace {

// Two events of `ordinal`'s pool for work on `stream` (the caller's thread
// error state kept), or none: the token says `captured` when the stream
// captures. Caller guards the last error.
bool take_events(const HipServices& hip, hipStream_t stream, int ordinal, HipTimingToken& token) noexcept {
  if (capturing(hip, stream)) {
    token.captured = true;
    return false;
  }
  std::lock_guard lock(g_mutex);
  if (!ensure_anchor(hip, ordinal) || !take_event(hip, ordinal, &token.start)) return false;
  if (!take_event(hip, ordinal, &token.end)) {
    pool(ordinal).push_back(token.start);
    token.start = nullptr;
    return false;
  }
  token.ordinal = ordinal;
  return true;
}

}  // namespace

HipTimingToken hip_timing_before(hipStream_t stream, int ordinal, bool asynchronous, bool done_by_return) noexcept {
  HipTimingToken token{};
  if (ordinal < 0 || ordinal >= kMaxDevices) return token;
  const HipServices& hip = hip_services();
  if (!hip.complete) return token;
  const LastErrorGuard keep(hip);
  if (!take_events(hip, stream, ordinal, token)) return token;
  std::mutex* lock = asynchronous ? submission_lock_of(stream) : nullptr;
  if (lock != nullptr) lock->lock();
  if (hip.event_record(token.start, stream) != hipSuccess) {
    if (lock != nullptr) lock->unlock();
    give_back(ordinal, token.start, token.end);
    return HipTimingToken{};
  }
  g_exit_work.work_begins();
  token.submission_lock = lock;
  token.done_by_return = done_by_return;
  token.submitted_ns = now_ns();
  return token;
}

HipTimingToken hip_timing_dispatch(hipStream_t stream, int ordinal) noexcept {
  HipTimingToken token{};
  if (ordinal < 0 || ordinal >= kMaxDevices) return token;
  const HipServices& hip = hip_services();
  if (!hip.complete) return token;
  {
    const LastErrorGuard keep(hip);
    if (!take_events(hip, stream, ordinal, token)) return token;
  }
  std::mutex* lock = submission_lock_of(stream);
  if (lock != nullptr) lock->lock();
  g_exit_work.work_begins();
  token.in_dispatch = true;
  token.submission_lock = lock;
  token.submitted_ns = now_ns();
  return token;
}

void hip_timing_returned(HipTimingToken& token, hipStream_t stream, bool submitted) noexcept {
  if (token.start == nullptr) return;
  token.returned_ns = now_ns();
  const HipServices& hip = hip_services();
  const LastErrorGuard keep(hip);
  const bool recorded = submitted && (token.in_dispatch || hip.event_record(token.end, stream) == hipSuccess);
  if (token.submission_lock != nullptr) static_cast<std::mutex*>(token.submission_lock)->unlock();
  token.submission_lock = nullptr;
  if (!recorded) {
    give_back(token.ordinal, token.start, token.end);
    token.start = token.end = nullptr;
  }
}

void hip_timing_queue(const HipTimingToken& token, uint64_t correlation_id, uint64_t stream, int32_t device,
                      format::GpuActivityKind kind) noexcept {
  if (token.start == nullptr) {
    // Captured work does not run now; other work without events runs untimed.
    if (!token.captured) g_untimed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::lock_guard lock(g_mutex);
  try {
    g_queue->push_back(Pending{token, correlation_id, stream, device, kind});
  } catch (...) {
    pool(token.ordinal).push_back(token.start);
    pool(token.ordinal).push_back(token.end);
  }
}

void hip_timing_release(const HipTimingToken& token) noexcept {
  if (token.start == nullptr) return;
  if (token.submission_lock != nullptr) static_cast<std::mutex*>(token.submission_lock)->unlock();
  give_back(token.ordinal, token.start, token.end);
}

void hip_capture_began() noexcept { g_captures.fetch_add(1, std::memory_order_relaxed); }
void hip_capture_ended() noexcept {
  if (g_captures.load(std::memory_order_relaxed) > 0) g_captures.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace proflaunch::hip
