#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "preload/base/clock.h"
#include "preload/base/fork_leftovers.h"
#include "preload/base/guard.h"
#include "preload/base/log.h"
#include "preload/config.h"
#include "preload/control/capture_control.h"
#include "preload/record/api_catalog.h"
#include "preload/record/definitions.h"
#include "preload/record/thread_registry.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/chunk_builder.h"
#include "preload/writer/flight_recorder.h"
#include "preload/writer/part_file.h"
#include "preload/writer/tick_converter.h"

namespace proflaunch {
namespace {

using namespace format;

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
Control g_control;
constexpr uint32_t kRoundFree = 0, kRoundWriter = 1, kRoundFork = 2;
constexpr uint32_t kThreadNone = 0, kThreadCreated = 1, kThreadRunning = 2, kThreadAbandoned = 3;
// How long an exiting thread waits for a writer thread that never began.
constexpr uint64_t kThreadStartGraceNs = 1000000000u;
// Whether this thread's fork got the round (two threads may fork at once).
__thread __attribute__((tls_model("initial-exec"))) bool tls_round_held_for_fork = false;

__thread __attribute__((tls_model("initial-exec"))) bool tls_on_writer_thread = false;

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void wake_waiters() { futex(&g_control.completed, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr); }

constexpr int kMaxTasks = 8;  // GPU timing (CUDA events, CUPTI, HIP), capture, control: room to spare
std::atomic<const WriterTask*> g_tasks[kMaxTasks];

class Writer {
 public:
  bool init(const SectionIdentity& section) noexcept {
    const Config& config = runtime::config();
    section_ = section;
    flush_interval_ns_ = uint64_t{config.flush_interval_ms} * 1000000u;
    // Drain often enough that rings stay far from full, rarely enough that an
    // idle process costs nothing measurable (~100 wakeups/s).
    uint32_t period_ms = config.flush_interval_ms / 4;
    drain_period_ms_ = period_ms < 1 ? 1 : (period_ms > 10 ? 10 : period_ms);
    ring_.configure(config.capture.ring_ns, config.capture.ring_bytes);
    return events_.init(kChunkContentBytes) && encoder_.init(kChunkContentBytes);
  }

  // The section's end on the calling thread, for a writer without a thread
  // (Control::no_thread): what the thread's last round does.
  void end_section_inline() noexcept {
    ReentrancyGuard guard;
    if (inline_ended_ && adopt_pending_section()) inline_ended_ = false;
    if (inline_ended_) return;
    end_section();
    inline_ended_ = true;
    g_control.section_ended.store(true, std::memory_order_release);
  }

  void run() noexcept {
    uint32_t created = kThreadCreated;
    if (!g_control.thread_state.compare_exchange_strong(created, kThreadRunning, std::memory_order_acq_rel))
      return;  // given up before it began: the Writer is someone else's now
    mark_profiler_thread();
    tls_on_writer_thread = true;
    prctl(PR_SET_NAME, "proflaunch-wr", 0, 0, 0);
    bool ended = false;
    bool busy = false;
    end_round();  // the thread has started (writer_ensure_started took the round)
    while (true) {
      if (!busy) wait_for_wake();
      begin_round();
      const uint32_t request = g_control.requested.load(std::memory_order_acquire);
      const bool stop = g_control.stop.load(std::memory_order_acquire);
      const bool end = g_control.end_section.exchange(false, std::memory_order_acq_rel) || stop;
      if (ended && adopt_pending_section()) ended = false;
      busy = false;
      if (!ended) {
        busy = cycle(/*final=*/false);
        const bool urgent = end || request != g_control.completed.load(std::memory_order_relaxed) ||
                            g_control.flush_request.exchange(false, std::memory_order_acq_rel);
        if (urgent || flush_due() || counts_due()) flush_events();
        if (ring_.enabled()) dump_if_asked();
        if (end) {
          end_section();
          ended = true;
        }
      }
      g_control.section_ended.store(ended, std::memory_order_release);
      g_control.completed.store(request, std::memory_order_release);
      wake_waiters();
      end_round();
      if (stop) break;
    }
    g_control.running.store(false, std::memory_order_release);
    wake_waiters();
  }

 private:
  // A fork waiting for the round goes first (at most 100 ms, as its own wait
  // is); one that holds it is waited for.
  static void begin_round() noexcept {
    for (int i = 0; i < 100 && g_control.fork_waiting.load(std::memory_order_acquire) != 0; ++i) {
      const timespec step{0, 1000000};
      futex(&g_control.fork_waiting, FUTEX_WAIT_PRIVATE, 1, &step);
    }
    while (true) {
      uint32_t seen = kRoundFree;
      if (g_control.round.compare_exchange_strong(seen, kRoundWriter, std::memory_order_acquire))
        return;
      const timespec step{0, 10000000};
      futex(&g_control.round, FUTEX_WAIT_PRIVATE, seen, &step);
    }
  }

  // Only the writer's own round (at the thread's start, a fork may hold it).
  static void end_round() noexcept {
    uint32_t mine = kRoundWriter;
    if (!g_control.round.compare_exchange_strong(mine, kRoundFree, std::memory_order_release)) return;
    futex(&g_control.round, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr);
  }

  // Sleeps for the drain period, or until someone bumps the wake word. A
  // bump between two waits is not lost: the kernel compares the word first.
  void wait_for_wake() noexcept {
    const uint32_t seen = g_control.wake_word.load(std::memory_order_acquire);
    if (seen != last_wake_word_) {
      last_wake_word_ = seen;
      return;
    }
    const timespec period{0, static_cast<long>(drain_period_ms_) * 1000000};
    futex(&g_control.wake_word, FUTEX_WAIT_PRIVATE, seen, &period);
    last_wake_word_ = g_control.wake_word.load(std::memory_order_acquire);
  }

  bool adopt_pending_section() noexcept {
    {
      std::lock_guard<std::mutex> lock(g_control.mutex);
      if (!g_control.has_pending_section) return false;
      g_control.has_pending_section = false;
      section_ = g_control.pending_section;
    }
    // Not under the control mutex: lock order is definitions before control
    // (runtime.cpp, prepare_fork).
    written_ = dropped_ = lost_to_write_failure_ = 0;
    write_loss_ = {};
    unwritten_definitions_.clear();
    file_.reset();
    definitions_begin_section();
    // The flight recorder starts over: its chunks were the old section's.
    ring_.reset();
    all_definitions_.clear();
    definitions_in_file_ = 0;
    dump_index_ = 0;
    oom_dumped_ = sticky_dumped_ = false;
    pending_dump_ = CaptureTrigger{};
    return true;
  }

  // Threads that only make counted calls write no records, but their counts
  // must still reach the file once per flush interval.
  bool counts_due() const noexcept { return now_ns() - counts_staged_ns_ >= flush_interval_ns_; }

  bool flush_due() const noexcept {
    if (events_.empty()) return false;
    return now_ns() - events_.first_append_ns() + uint64_t{drain_period_ms_} * 1000000u >=
           flush_interval_ns_;
  }

  // One round of work: the tasks' snapshots, the rings, then the tasks (see
  // writer_tasks.h for why in this order). True when a chunk filled up.
  bool cycle(bool final) noexcept {
    ticks_.sample();
    for (auto& slot : g_tasks)
      if (const WriterTask* task = slot.load(std::memory_order_acquire)) task->before_drain();
    const bool filled = drain_rings(final);
    TaskSink sink(*this);
    for (auto& slot : g_tasks)
      if (const WriterTask* task = slot.load(std::memory_order_acquire)) task->run(sink, final);
    return filled;
  }

  // Where tasks append their records: the section's events, as the writer
  // thread's own.
  class TaskSink final : public WriterRecordSink {
   public:
    explicit TaskSink(Writer& writer) : writer_(writer), tid_(static_cast<uint32_t>(gettid())) {}
    bool append(const void* record, uint16_t bytes) noexcept override {
      const uint64_t now = now_ns();
      if (writer_.events_.append(tid_, record, bytes, now)) return true;
      writer_.flush_events();
      return writer_.events_.append(tid_, record, bytes, now);
    }

   private:
    Writer& writer_;
    uint32_t tid_;
  };

  // Returns true when a chunk filled up (more may be waiting: no sleep).
  bool drain_rings(bool final_drain) noexcept {
    bool filled = false;
    const uint64_t now = now_ns();
    RegisteredBuffer* buffer = registry_first();
    while (buffer != nullptr) {
      RegisteredBuffer* next = buffer->next.load(std::memory_order_acquire);
      // Read before draining: once retired, the thread's last records are visible.
      const bool retired = buffer->retired.load(std::memory_order_acquire);
      filled |= drain_ring(buffer->ring, now);
      if (retired || final_drain) {
        stage_call_counts(buffer->ring, now, /*all=*/true);
        stage_pending_loss(buffer->ring, now);
      }
      if (retired && !buffer->ring.has_records()) registry_release(buffer);
      buffer = next;
    }
    return filled;
  }

  bool drain_ring(ThreadBuffer& ring, uint64_t now) noexcept {
    bool filled = false;
    while (true) {
      bool full = false;
      const DrainResult result = ring.drain([&](const void* record, uint16_t bytes) {
        // A record left in the ring for the next chunk is drained again:
        // nothing may be done to it before it is known to fit.
        if (!events_.fits(ring.tid(), bytes)) {
          full = true;
          return false;
        }
        // The slot is the writer's until drain() moves past it: convert the
        // span's ticks to ns in place.
        ticks_.convert_record(const_cast<void*>(record), bytes);
        define_api_of(record, bytes);
        if (ring_.enabled()) note_for_ring(record, bytes, now);
        return events_.append(ring.tid(), record, bytes, now);
      });
      if (result.corrupt)
        warn_once(Warning::kCorruptRing,
                  "a thread buffer held a malformed record; the rest of it was discarded");
      if (!full) return filled;
      filled = true;
      flush_events();
      // Threads that record without pause keep a drain going: let a waiting
      // fork in between two chunks (no lock is held here).
      if (g_control.fork_waiting.load(std::memory_order_acquire) != 0) {
        end_round();
        begin_round();
      }
    }
  }

  // An API named by a record gets its ApiDef before the record's chunk is
  // written (api_catalog.h).
  static void define_api_of(const void* record, uint16_t bytes) noexcept {
    uint16_t kind;
    std::memcpy(&kind, record, sizeof kind);
    if (!has_api_span(kind) || bytes < kApiSpanOffset + sizeof(ApiSpan)) return;
    uint16_t api;
    std::memcpy(&api, static_cast<const uint8_t*>(record) + kApiSpanOffset + offsetof(ApiSpan, api), sizeof api);
    if (api != 0) define_api_on_first_use(api);
  }

  // The thread's counted calls since the last time, as ApiCount records in
  // its own stream. The window starts where the previous one ended (or when
  // the writer first saw the thread).
  void stage_call_counts(ThreadBuffer& ring, uint64_t now, bool all) noexcept {
    ring.take_call_counts(all, [&](uint16_t api, uint32_t count) {
      define_api_on_first_use(api);
      ApiCountRecord record{};
      record.header = header_for<ApiCountRecord>();
      record.api = api;
      record.count = count;
      record.first_ns = ring.counts_since_ns() != 0 ? ring.counts_since_ns() : now;
      record.last_ns = now;
      if (!events_.append(ring.tid(), &record, sizeof record, now)) {
        flush_events_without_counts();
        events_.append(ring.tid(), &record, sizeof record, now);
      }
    });
    ring.set_counts_since_ns(now);
  }

  void stage_all_call_counts(uint64_t now) noexcept {
    for (RegisteredBuffer* buffer = registry_first(); buffer != nullptr;
         buffer = buffer->next.load(std::memory_order_acquire))
      stage_call_counts(buffer->ring, now, /*all=*/false);
  }

  void stage_pending_loss(ThreadBuffer& ring, uint64_t now) noexcept {
    const ThreadBuffer::PendingLoss loss = ring.take_pending_loss();
    if (loss.count == 0) return;
    LostRecord record{};
    record.header = header_for<LostRecord>();
    record.reason = static_cast<uint32_t>(LostReason::kBufferFull);
    record.first_ns = ticks_.to_ns(loss.first_ns);  // the ring counts losses in ticks
    record.last_ns = ticks_.to_ns(loss.last_ns);
    record.count = loss.count;
    if (!events_.append(ring.tid(), &record, sizeof record, now)) {
      flush_events();
      events_.append(ring.tid(), &record, sizeof record, now);
    }
  }

  // The part is created by the first Events chunk, and starts with the
  // section's ProcessInfo and every definition made so far.
  bool ensure_file_open() noexcept {
    if (file_.failed()) return false;
    if (file_.exists()) return true;
    return create_file(/*with_pending_definitions=*/true);
  }

  // Creates the part and writes the section's ProcessInfo, followed by the
  // pending definitions when asked (the flight recorder keeps its own).
  bool create_file(bool with_pending_definitions) noexcept {
    const Config& config = runtime::config();
    if (!file_.create(config.parts_dir, section_.pid, section_.id)) return false;
    const ProcessInfoRecord info = build_process_info(section_, config);
    try {
      unwritten_definitions_.assign(reinterpret_cast<const uint8_t*>(&info),
                                    reinterpret_cast<const uint8_t*>(&info) + sizeof info);
    } catch (...) {
      file_.mark_failed("out of memory for");
      return false;
    }
    if (with_pending_definitions && !take_pending_definitions(unwritten_definitions_)) {
      file_.mark_failed("out of memory for");
      return false;
    }
    return write_unwritten_definitions();
  }

  bool write_pending_definitions() noexcept {
    if (!take_pending_definitions(unwritten_definitions_)) {
      file_.mark_failed("out of memory for");
      return false;
    }
    return write_unwritten_definitions();
  }

  // Definitions taken from the store stay here until they are on disk: a
  // write that fails for now (out of descriptors) leaves them for the next.
  bool write_unwritten_definitions() noexcept {
    size_t written = 0;
    const bool ok = write_definitions(unwritten_definitions_, 0, &written);
    unwritten_definitions_.erase(unwritten_definitions_.begin(),
                                 unwritten_definitions_.begin() + static_cast<ptrdiff_t>(written));
    return ok;
  }

  bool write_definitions(const std::vector<uint8_t>& content, size_t from = 0, size_t* written = nullptr) noexcept {
    size_t offset = from;
    while (offset < content.size()) {
      const size_t piece = whole_records_prefix(content.data() + offset, content.size() - offset,
                                                kChunkContentBytes);
      if (piece == 0) break;  // malformed tail: never produced by definitions.cpp
      if (!write_chunk(ChunkKind::kDefinitions, content.data() + offset, piece)) return false;
      offset += piece;
      if (written != nullptr) *written = offset - from;
    }
    return true;
  }

  bool write_chunk(ChunkKind kind, const void* content, size_t bytes) noexcept {
    const size_t encoded = encoder_.encode(kind, section_.id, content, bytes);
    if (encoded == 0) {
      file_.mark_failed("cannot compress a chunk for");
      return false;
    }
    return file_.append(encoder_.data(), encoded);
  }

  // Counted calls go out with every flush, so their windows follow the
  // flush interval.
  void flush_events() noexcept {
    counts_staged_ns_ = now_ns();
    stage_all_call_counts(counts_staged_ns_);
    flush_events_without_counts();
  }

  void flush_events_without_counts() noexcept {
    if (events_.empty() && write_loss_.count == 0) return;
    if (ring_.enabled()) {
      keep_in_ring();
      return;
    }
    const uint64_t staged = stage_write_loss();
    const uint64_t events = events_.event_records();
    const uint64_t lost = events_.lost_records();
    const uint64_t first_ns = events_.first_append_ns();
    const bool ok = ensure_file_open() && write_pending_definitions() &&
                    write_chunk(ChunkKind::kEvents, events_.content(), events_.content_bytes());
    if (ok) {
      written_ += events;
      dropped_ += lost;  // the staged write loss included
      write_loss_ = {};
    } else {
      // Said in the next chunk that gets out (after a failure for now, or in
      // the last attempt at the end), with the losses this chunk would have
      // reported (the staged count is already in).
      lost_to_write_failure_ += events;
      if (write_loss_.count == 0) write_loss_.first_ns = first_ns;
      write_loss_.last_ns = now_ns();
      write_loss_.count += events + (lost - staged);
    }
    events_.clear();
  }

  // The events a flush could not write for want of descriptors, as a Lost
  // record in front of the next chunk (which may not get out either: then
  // the count grows and is staged again).
  uint64_t stage_write_loss() noexcept {
    if (write_loss_.count == 0) return 0;
    LostRecord record{};
    record.header = header_for<LostRecord>();
    record.reason = static_cast<uint32_t>(LostReason::kWriteFailed);
    record.first_ns = write_loss_.first_ns;
    record.last_ns = write_loss_.last_ns;
    record.count = write_loss_.count;
    // A full chunk: the next flush says it.
    return events_.append(static_cast<uint32_t>(gettid()), &record, sizeof record, now_ns()) ? record.count : 0;
  }

  void end_section() noexcept {
    cycle(/*final=*/true);
    flush_events();
    if (!ring_.enabled() && file_.failed() && file_.exists() && tls_on_writer_thread) {
      // One last attempt after a failed write (EIO, a disk full that has
      // room again): a chunk that counts what was lost, then the end. The
      // part was cut back to its last whole chunk when the write failed. On
      // the writer thread only: its signals are blocked (SIGXFSZ).
      file_.clear_failure();
      flush_events_without_counts();
      if (file_.failed() && write_loss_.count != 0) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "pid %u: %llu events after the failed write are not in the trace", section_.pid,
                      static_cast<unsigned long long>(write_loss_.count));
        print_line(line);
      }
    }
    if (ring_.enabled()) {
      if (runtime::config().capture.ring_dump_at_exit)
        dump(g_control.stop.load(std::memory_order_acquire) ? CaptureTrigger::kExit : CaptureTrigger::kExec);
      else
        dump_if_asked();
    }
    if (file_.exists() && !file_.failed() && (ring_.enabled() ? ring_definitions_written() : write_pending_definitions())) {
      SectionEndRecord end{};
      end.header = header_for<SectionEndRecord>();
      end.end_ns = now_ns();
      end.records_written = written_;
      end.records_dropped = dropped_;
      write_chunk(ChunkKind::kDefinitions, &end, sizeof end);
    }
    if (runtime::config().verbose) report();
  }


  // ---- flight recorder (--ring): chunks are kept in memory, dumps write them

  // A drained record: its memory operation is remembered with its chunk, its
  // begin time widens the chunk's, and it may set off a dump.
  void note_for_ring(const void* record, uint16_t bytes, uint64_t now) noexcept {
    uint16_t kind;
    std::memcpy(&kind, record, sizeof kind);
    uint64_t begin = now;
    if (has_api_span(kind) && bytes >= kApiSpanOffset + sizeof(ApiSpan))
      std::memcpy(&begin, static_cast<const uint8_t*>(record) + kApiSpanOffset + offsetof(ApiSpan, begin_ns),
                  sizeof begin);
    if (begin != 0 && (chunk_first_ns_ == 0 || begin < chunk_first_ns_)) chunk_first_ns_ = begin;
    if (kind == static_cast<uint16_t>(RecordKind::kMemoryOperation) && bytes >= sizeof(MemoryOperationRecord)) {
      MemoryOperationRecord op;
      std::memcpy(&op, record, sizeof op);
      try {
        chunk_memory_.push_back(op);
      } catch (...) {
        ++ring_memory_overflow_;
      }
    }
    const CaptureTrigger trigger = capture::trigger_of_record(record, bytes);
    if (trigger == CaptureTrigger::kOutOfMemory && !oom_dumped_) {
      oom_dumped_ = true;
      ask_dump(trigger);
    } else if (trigger == CaptureTrigger::kStickyError && !sticky_dumped_) {
      sticky_dumped_ = true;
      ask_dump(trigger);
    }
  }

  void ask_dump(CaptureTrigger trigger) noexcept {
    if (pending_dump_ == CaptureTrigger{}) pending_dump_ = trigger;
  }

  // Seals the staged records into a kept chunk (the definitions they name are
  // kept for good, all of them, for every dump's file).
  void keep_in_ring() noexcept {
    const uint64_t events = events_.event_records();
    dropped_ += events_.lost_records();
    const uint64_t now = now_ns();
    capture::KeptChunk chunk;
    bool ok = take_pending_definitions(all_definitions_);
    const size_t encoded = ok ? encoder_.encode(ChunkKind::kEvents, section_.id, events_.content(),
                                                events_.content_bytes())
                              : 0;
    if (encoded != 0) {
      try {
        chunk.encoded.assign(encoder_.data(), encoder_.data() + encoded);
        chunk.memory.swap(chunk_memory_);
      } catch (...) {
        ok = false;
      }
    }
    chunk.first_ns = chunk_first_ns_ != 0 ? chunk_first_ns_ : events_.first_append_ns();
    chunk.last_ns = now;
    chunk.records = events;
    if (encoded == 0 || !ok || !ring_.keep(std::move(chunk), now)) lost_to_write_failure_ += events;
    chunk_memory_.clear();
    chunk_first_ns_ = 0;
    events_.clear();
  }

  // A trigger seen in the records first (it happened before the request was
  // served), then the request: each its own window, the second holding what
  // came after the first.
  void dump_if_asked() noexcept {
    const auto requested = static_cast<CaptureTrigger>(g_control.dump_request.exchange(0, std::memory_order_acq_rel));
    if (pending_dump_ != CaptureTrigger{}) {
      const CaptureTrigger trigger = pending_dump_;
      pending_dump_ = CaptureTrigger{};
      dump(trigger);
    }
    if (requested != CaptureTrigger{}) dump(requested);
  }

  // The part file of a ring section starts with ProcessInfo and every
  // definition kept so far; later dumps add the definitions made since.
  bool ring_definitions_written() noexcept {
    if (file_.failed()) return false;
    if (!file_.exists()) {
      if (!create_file(/*with_pending_definitions=*/false)) return false;
      definitions_in_file_ = 0;
    }
    if (!take_pending_definitions(all_definitions_)) {
      file_.mark_failed("out of memory for");
      return false;
    }
    if (!write_definitions(all_definitions_, definitions_in_file_)) return false;
    definitions_in_file_ = all_definitions_.size();
    return true;
  }

  // Stages one record for a dump's own chunks (window records, carried state).
  void stage_for_dump(const void* record, uint16_t bytes) noexcept {
    const uint64_t now = now_ns();
    if (events_.append(writer_tid_, record, bytes, now)) return;
    write_staged_for_dump();
    events_.append(writer_tid_, record, bytes, now);
  }

  bool write_staged_for_dump() noexcept {
    if (events_.empty()) return true;
    const uint64_t events = events_.event_records();
    const bool ok = ring_definitions_written() &&
                    write_chunk(ChunkKind::kEvents, events_.content(), events_.content_bytes());
    if (ok) written_ += events;
    events_.clear();
    return ok;
  }

  static void carry_into_dump(const void* record, uint16_t bytes) {
    if (dumping_ == nullptr || bytes > 1024) return;
    uint8_t copy[1024];
    std::memcpy(copy, record, bytes);
    if (!capture::mark_carried(copy, bytes, dumping_->dump_begin_ns_)) return;
    define_api_of(copy, bytes);
    dumping_->stage_for_dump(copy, bytes);
  }

  // Writes what the ring holds as one window named after `trigger`: its
  // begin and the state carried into it, the kept chunks, its end.
  void dump(CaptureTrigger trigger) noexcept {
    flush_events();
    const uint64_t now = now_ns();
    ring_.expire(now);
    writer_tid_ = static_cast<uint32_t>(gettid());
    dump_begin_ns_ = ring_.window_begin_ns(now);
    CaptureWindowRecord begin{};
    begin.header = header_for<CaptureWindowRecord>();
    begin.index = dump_index_;
    begin.at_ns = dump_begin_ns_;
    begin.action = static_cast<uint8_t>(CaptureWindowAction::kBegin);
    begin.trigger = static_cast<uint8_t>(trigger);
    stage_for_dump(&begin, sizeof begin);
    dumping_ = this;
    for (MemoryOperationRecord& block : ring_.blocks_before()) carry_into_dump(&block, sizeof block);
    capture::run_carry_listeners(&carry_into_dump);
    dumping_ = nullptr;
    bool ok = write_staged_for_dump();
    for (const capture::KeptChunk& chunk : ring_.chunks()) {
      if (!ok) break;
      ok = file_.append(chunk.encoded.data(), chunk.encoded.size());
      if (ok) written_ += chunk.records;
    }
    CaptureWindowRecord end = begin;
    end.at_ns = now_ns();
    end.action = static_cast<uint8_t>(CaptureWindowAction::kEnd);
    stage_for_dump(&end, sizeof end);
    if (ok) ok = write_staged_for_dump();
    events_.clear();
    ring_.dumped();
    ++dump_index_;
    if (runtime::config().verbose) {
      char line[160];
      std::snprintf(line, sizeof line, "pid %u: flight recorder dump %u (%s)%s", section_.pid, dump_index_ - 1,
                    trigger_text(trigger), ok ? "" : " failed: see the warning above");
      print_line(line);
    }
  }

  static const char* trigger_text(CaptureTrigger trigger) noexcept {
    switch (trigger) {
      case CaptureTrigger::kCrash: return "crash";
      case CaptureTrigger::kOutOfMemory: return "out of memory";
      case CaptureTrigger::kStickyError: return "sticky device error";
      case CaptureTrigger::kRequest: return "request";
      case CaptureTrigger::kExit: return "exit";
      case CaptureTrigger::kExec: return "exec";
      default: return "?";
    }
  }

  void report() noexcept {
    char line[kMaxPathBytes + 256];
    char section_hex[17];
    format_hex64(section_.id, section_hex);
    if (file_.exists())
      std::snprintf(line, sizeof line,
                    "pid %u section %s: %llu records written, %llu dropped, %llu lost to a "
                    "failed write (%s)",
                    section_.pid, section_hex, static_cast<unsigned long long>(written_),
                    static_cast<unsigned long long>(dropped_),
                    static_cast<unsigned long long>(lost_to_write_failure_), file_.path());
    else
      std::snprintf(line, sizeof line, "pid %u section %s: nothing recorded, no part written",
                    section_.pid, section_hex);
    print_line(line);
    if (ring_.enabled()) {
      const capture::RingStats& r = ring_.stats();
      std::snprintf(line, sizeof line,
                    "pid %u flight recorder: %llu dumps (%llu records), peak %llu KiB kept of %llu KiB, "
                    "%llu records let go",
                    section_.pid, static_cast<unsigned long long>(r.dumps),
                    static_cast<unsigned long long>(r.dumped_records),
                    static_cast<unsigned long long>(r.peak_bytes >> 10),
                    static_cast<unsigned long long>(ring_.max_bytes() >> 10),
                    static_cast<unsigned long long>(r.evicted_records));
      print_line(line);
    }
  }

  SectionIdentity section_;
  uint32_t last_wake_word_ = 0;
  uint64_t flush_interval_ns_ = 0;
  uint64_t counts_staged_ns_ = 0;
  uint32_t drain_period_ms_ = 10;
  EventChunkBuilder events_;
  TickConverter ticks_;
  ChunkWriterBuffer encoder_;
  PartFile file_;
  std::vector<uint8_t> unwritten_definitions_;
  struct WriteLoss {
    uint64_t first_ns = 0, last_ns = 0, count = 0;
  } write_loss_;
  uint64_t written_ = 0;
  uint64_t dropped_ = 0;
  uint64_t lost_to_write_failure_ = 0;
  // Flight recorder.
  capture::FlightRecorder ring_;
  std::vector<MemoryOperationRecord> chunk_memory_;
  uint64_t chunk_first_ns_ = 0;
  uint64_t ring_memory_overflow_ = 0;
  std::vector<uint8_t> all_definitions_;
  size_t definitions_in_file_ = 0;
  CaptureTrigger pending_dump_{};
  bool oom_dumped_ = false;
  bool sticky_dumped_ = false;
  uint32_t dump_index_ = 0;
  uint32_t writer_tid_ = 0;
  uint64_t dump_begin_ns_ = 0;
  bool inline_ended_ = false;
  static Writer* dumping_;
};
Writer* Writer::dumping_ = nullptr;

// The Writer is never freed: a fork child may hold a copy of the pointer,
// and the process is ending anyway. Held here so that it stays reachable
// (LeakSanitizer in an ASan-built program would otherwise report it at exit
// and change the program's exit status); a fork child's new Writer keeps the
// parent's reachable too.
Writer* g_writer = nullptr;

void* writer_main(void* writer) {
  static_cast<Writer*>(writer)->run();
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

  auto* writer = new (std::nothrow) Writer();
  if (writer == nullptr || !writer->init(section)) {
    g_control.start_failed = true;
    delete writer;
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
    delete writer;
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
  g_writer->end_section_inline();
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
