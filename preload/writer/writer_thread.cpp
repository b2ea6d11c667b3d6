#include "preload/writer/writer_thread.h"

#include <linux/futex.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <mutex>
#include <new>

#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/base/log.h"
#include "preload/config.h"
#include "preload/record/api_catalog.h"
#include "preload/record/definitions.h"
#include "preload/record/early_counts.h"
#include "preload/record/thread_registry.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/chunk_builder.h"
#include "preload/writer/flight_recorder_output.h"
#include "preload/writer/section_output.h"
#include "preload/writer/tick_converter.h"
#include "preload/writer/writer_control.h"

namespace proflaunch::writer {

using namespace format;

class Writer {
 public:
  bool init(const SectionIdentity& section) noexcept {
    const Config& config = runtime::config();
    flush_interval_ns_ = uint64_t{config.flush_interval_ms} * 1000000u;
    // Drain often enough that rings stay far from full, rarely enough that an
    // idle process costs nothing measurable (~100 wakeups/s).
    uint32_t period_ms = config.flush_interval_ms / 4;
    drain_period_ms_ = period_ms < 1 ? 1 : (period_ms > 10 ? 10 : period_ms);
    ring_.configure(config.capture.ring_ns, config.capture.ring_bytes);
    return events_.init(kChunkContentBytes) && out_.init(section);
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
    SectionIdentity section;
    {
      std::lock_guard<std::mutex> lock(g_control.mutex);
      if (!g_control.has_pending_section) return false;
      g_control.has_pending_section = false;
      section = g_control.pending_section;
    }
    // Not under the control mutex: lock order is definitions before control
    // (process/lifecycle.cpp, prepare_fork).
    out_.begin(section);
    write_loss_ = {};
    definitions_begin_section();
    // The flight recorder starts over: its chunks were the old section's.
    ring_.reset();
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
      return append_for_thread(tid_, record, bytes);
    }
    bool append_for_thread(uint32_t tid, const void* record, uint16_t bytes) noexcept override {
      const uint64_t now = now_ns();
      if (writer_.ring_.enabled()) writer_.ring_.note_task_record(record, bytes);
      if (writer_.events_.append(tid, record, bytes, now)) return true;
      writer_.flush_events();
      return writer_.events_.append(tid, record, bytes, now);
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
        // An API named by a record gets its ApiDef before the record's chunk
        // is written (api_catalog.h).
        define_api_of_record(record, bytes);
        if (ring_.enabled()) ring_.note(record, bytes, now);
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

  // The thread's counted calls since the last time, as ApiCount records in
  // its own stream. The window is a true bound of the calls it counts: it
  // starts where the previous take began (`now`, read before it; for the
  // first, when the thread attached) and ends when the counter was read.
  void stage_call_counts(ThreadBuffer& ring, uint64_t now, bool all) noexcept {
    ring.take_call_counts(all, [&](uint16_t api, uint32_t count) {
      ApiCountRecord record{};
      record.first_ns = ring.counts_since_ns() != 0 ? ring.counts_since_ns() : now;
      record.last_ns = now_ns();  // after the counter was read: a call counted since is later
      record.api = api;
      record.count = count;
      stage_count(ring.tid(), record, now);
    });
    ring.set_counts_since_ns(now);
  }

  void stage_count(uint32_t tid, ApiCountRecord& record, uint64_t now) noexcept {
    define_api_on_first_use(record.api);
    record.header = header_for<ApiCountRecord>();
    if (!events_.append(tid, &record, sizeof record, now)) {
      flush_events_without_counts();
      events_.append(tid, &record, sizeof record, now);
    }
  }

  // Calls counted before the shim started (record/early_counts.h), in the
  // stream of the thread that made the first of them, with their own times.
  void stage_counts_before_start(uint64_t now) noexcept {
    if (!has_counts_before_start()) return;
    struct Context {
      Writer* writer;
      uint64_t now;
    } context{this, now};
    take_counts_before_start(
        [](const EarlyCount& count, void* opaque) {
          auto& c = *static_cast<Context*>(opaque);
          ApiCountRecord record{};
          record.api = count.api;
          record.count = count.count;
          record.first_ns = count.first_ns;
          record.last_ns = count.last_ns;
          c.writer->stage_count(count.tid, record, c.now);
        },
        &context);
  }

  void stage_all_call_counts(uint64_t now) noexcept {
    stage_counts_before_start(now);
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
      ring_.keep(events_, out_);
      return;
    }
    const uint64_t staged = stage_write_loss();
    const uint64_t events = events_.event_records();
    const uint64_t lost = events_.lost_records();
    const uint64_t first_ns = events_.first_append_ns();
    const bool ok = out_.ensure_open() && out_.write_pending_definitions() &&
                    out_.write_chunk(ChunkKind::kEvents, events_.content(), events_.content_bytes());
    SectionTotals& totals = out_.totals();
    if (ok) {
      totals.written += events;
      totals.dropped += lost;  // the staged write loss included
      write_loss_ = {};
    } else {
      // Said in the next chunk that gets out (after a failure for now, or in
      // the last attempt at the end), with the losses this chunk would have
      // reported (the staged count is already in).
      totals.lost_to_write_failure += events;
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

  // A trigger seen in the records first (it happened before the request was
  // served), then the request: each its own window, the second holding what
  // came after the first.
  void dump_if_asked() noexcept {
    const auto requested = static_cast<CaptureTrigger>(g_control.dump_request.exchange(0, std::memory_order_acq_rel));
    const CaptureTrigger seen = ring_.take_trigger();
    if (seen != CaptureTrigger{}) dump(seen);
    if (requested != CaptureTrigger{}) dump(requested);
  }

  void dump(CaptureTrigger trigger) noexcept {
    flush_events();  // what is staged is kept first: the dump holds it
    ring_.dump(trigger, events_, out_);
  }

  void end_section() noexcept {
    cycle(/*final=*/true);
    flush_events();
    PartFile& file = out_.file();
    if (!ring_.enabled() && file.failed() && file.exists() && tls_on_writer_thread) {
      // One last attempt after a failed write (EIO, a disk full that has
      // room again): a chunk that counts what was lost, then the end. The
      // part was cut back to its last whole chunk when the write failed. On
      // the writer thread only: its signals are blocked (SIGXFSZ).
      file.clear_failure();
      flush_events_without_counts();
      if (file.failed() && write_loss_.count != 0) {
        char line[160];
        std::snprintf(line, sizeof line,
                      "pid %u: %llu events after the failed write are not in the trace", out_.section().pid,
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
    if (file.exists() && !file.failed() &&
        (ring_.enabled() ? ring_.definitions_written(out_) : out_.write_pending_definitions())) {
      SectionEndRecord end{};
      end.header = header_for<SectionEndRecord>();
      end.end_ns = now_ns();
      end.records_written = out_.totals().written;
      end.records_dropped = out_.totals().dropped;
      out_.write_chunk(ChunkKind::kDefinitions, &end, sizeof end);
    }
    if (runtime::config().verbose) report();
  }

  void report() noexcept {
    const SectionIdentity& section = out_.section();
    const SectionTotals& totals = out_.totals();
    char line[kMaxPathBytes + 256];
    char section_hex[17];
    format_hex64(section.id, section_hex);
    if (out_.file().exists())
      std::snprintf(line, sizeof line,
                    "pid %u section %s: %llu records written, %llu dropped, %llu lost to a "
                    "failed write (%s)",
                    section.pid, section_hex, static_cast<unsigned long long>(totals.written),
                    static_cast<unsigned long long>(totals.dropped),
                    static_cast<unsigned long long>(totals.lost_to_write_failure), out_.file().path());
    else
      std::snprintf(line, sizeof line, "pid %u section %s: nothing recorded, no part written",
                    section.pid, section_hex);
    print_line(line);
    if (ring_.enabled()) ring_.report(section.pid);
  }

  uint32_t last_wake_word_ = 0;
  uint64_t flush_interval_ns_ = 0;
  uint64_t counts_staged_ns_ = 0;
  uint32_t drain_period_ms_ = 10;
  EventChunkBuilder events_;  // staged: the next Events chunk
  TickConverter ticks_;
  SectionOutput out_;
  struct WriteLoss {
    uint64_t first_ns = 0, last_ns = 0, count = 0;
  } write_loss_;
  capture::FlightRecorderOutput ring_;  // --ring: kept and dumped instead of written
  bool inline_ended_ = false;
};

Writer* new_writer(const SectionIdentity& section) noexcept {
  auto* writer = new (std::nothrow) Writer();
  if (writer != nullptr && !writer->init(section)) {
    delete writer;
    return nullptr;
  }
  return writer;
}

void delete_writer(Writer* writer) noexcept { delete writer; }

void run_writer(Writer& writer) noexcept { writer.run(); }

void end_section_inline(Writer& writer) noexcept { writer.end_section_inline(); }

}  // namespace proflaunch::writer
