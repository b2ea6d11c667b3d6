#include "preload/writer/flight_recorder_output.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "preload/base/clock.h"
#include "preload/base/log.h"
#include "preload/capture/carried_state.h"
#include "preload/record/api_catalog.h"
#include "preload/record/definitions.h"
#include "preload/state/runtime_state.h"

namespace proflaunch::capture {

using namespace format;

FlightRecorderOutput* FlightRecorderOutput::dumping_ = nullptr;

void FlightRecorderOutput::reset() noexcept {
  kept_.reset();
  all_definitions_.clear();
  definitions_in_file_ = 0;
  dump_index_ = 0;
  oom_dumped_ = sticky_dumped_ = false;
  pending_dump_ = CaptureTrigger{};
  for (GpuTimingInfoRecord& info : timing_info_) info = GpuTimingInfoRecord{};
}

void FlightRecorderOutput::note_task_record(const void* record, uint16_t bytes) noexcept {
  uint16_t kind;
  std::memcpy(&kind, record, sizeof kind);
  if (kind != static_cast<uint16_t>(RecordKind::kGpuTimingInfo) || bytes < sizeof(GpuTimingInfoRecord)) return;
  GpuTimingInfoRecord info;
  std::memcpy(&info, record, sizeof info);
  timing_info_[info.source & 3] = info;
}

void FlightRecorderOutput::note(const void* record, uint16_t bytes, uint64_t now) noexcept {
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
      ++memory_overflow_;
    }
  }
  const CaptureTrigger trigger = trigger_of_record(record, bytes);
  if (trigger == CaptureTrigger::kOutOfMemory && !oom_dumped_) {
    oom_dumped_ = true;
    ask_dump(trigger);
  } else if (trigger == CaptureTrigger::kStickyError && !sticky_dumped_) {
    sticky_dumped_ = true;
    ask_dump(trigger);
  }
}

void FlightRecorderOutput::ask_dump(CaptureTrigger trigger) noexcept {
  if (pending_dump_ == CaptureTrigger{}) pending_dump_ = trigger;
}

CaptureTrigger FlightRecorderOutput::take_trigger() noexcept {
  const CaptureTrigger trigger = pending_dump_;
  pending_dump_ = CaptureTrigger{};
  return trigger;
}

void FlightRecorderOutput::keep(EventChunkBuilder& staged, SectionOutput& out) noexcept {
  const uint64_t events = staged.event_records();
  out.totals().dropped += staged.lost_records();
  const uint64_t now = now_ns();
  KeptChunk chunk;
  bool ok = take_pending_definitions(all_definitions_);
  const size_t encoded =
      ok ? out.encode(ChunkKind::kEvents, staged.content(), staged.content_bytes()) : 0;
  if (encoded != 0) {
    try {
      chunk.encoded.assign(out.encoded(), out.encoded() + encoded);
      chunk.memory.swap(chunk_memory_);
    } catch (...) {
      ok = false;
    }
  }
  chunk.first_ns = chunk_first_ns_ != 0 ? chunk_first_ns_ : staged.first_append_ns();
  chunk.last_ns = now;
  chunk.records = events;
  if (encoded == 0 || !ok || !kept_.keep(std::move(chunk), now)) out.totals().lost_to_write_failure += events;
  chunk_memory_.clear();
  chunk_first_ns_ = 0;
  staged.clear();
}

bool FlightRecorderOutput::definitions_written(SectionOutput& out) noexcept {
  PartFile& file = out.file();
  if (file.failed()) return false;
  if (!file.exists()) {
    if (!out.create(/*with_pending_definitions=*/false)) return false;
    definitions_in_file_ = 0;
  }
  if (!take_pending_definitions(all_definitions_)) {
    file.mark_failed("out of memory for");
    return false;
  }
  if (!out.write_definitions(all_definitions_, definitions_in_file_)) return false;
  definitions_in_file_ = all_definitions_.size();
  return true;
}

// Stages one record for the dump's own chunks (window records, carried state).
void FlightRecorderOutput::stage(const void* record, uint16_t bytes) noexcept {
  const uint64_t now = now_ns();
  if (staging_->append(writer_tid_, record, bytes, now)) return;
  write_staged();
  staging_->append(writer_tid_, record, bytes, now);
}

bool FlightRecorderOutput::write_staged() noexcept {
  if (staging_->empty()) return true;
  const uint64_t events = staging_->event_records();
  const bool ok = definitions_written(*out_) &&
                  out_->write_chunk(ChunkKind::kEvents, staging_->content(), staging_->content_bytes());
  if (ok) out_->totals().written += events;
  staging_->clear();
  return ok;
}

void FlightRecorderOutput::carry_into_dump(const void* record, uint16_t bytes) {
  if (dumping_ == nullptr || bytes > 1024) return;
  uint8_t copy[1024];
  std::memcpy(copy, record, bytes);
  if (!mark_carried(copy, bytes, dumping_->dump_begin_ns_)) return;
  define_api_of_record(copy, bytes);
  dumping_->stage(copy, bytes);
}

namespace {

const char* trigger_text(CaptureTrigger trigger) noexcept {
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

}  // namespace

void FlightRecorderOutput::dump(CaptureTrigger trigger, EventChunkBuilder& staging, SectionOutput& out) noexcept {
  staging_ = &staging;
  out_ = &out;
  const uint64_t now = now_ns();
  kept_.expire(now);
  writer_tid_ = static_cast<uint32_t>(gettid());
  dump_begin_ns_ = kept_.window_begin_ns(now);
  CaptureWindowRecord begin{};
  begin.header = header_for<CaptureWindowRecord>();
  begin.index = dump_index_;
  begin.at_ns = dump_begin_ns_;
  begin.action = static_cast<uint8_t>(CaptureWindowAction::kBegin);
  begin.trigger = static_cast<uint8_t>(trigger);
  stage(&begin, sizeof begin);
  // Which backend timed the GPU work: its note was written when it started,
  // and the ring let it go long ago.
  for (const GpuTimingInfoRecord& info : timing_info_)
    if (info.header.kind != 0) stage(&info, sizeof info);
  dumping_ = this;
  for (MemoryOperationRecord& block : kept_.blocks_before()) carry_into_dump(&block, sizeof block);
  run_carry_listeners(&carry_into_dump);
  dumping_ = nullptr;
  bool ok = write_staged();
  for (const KeptChunk& chunk : kept_.chunks()) {
    if (!ok) break;
    ok = out.file().append(chunk.encoded.data(), chunk.encoded.size());
    if (ok) out.totals().written += chunk.records;
  }
  CaptureWindowRecord end = begin;
  end.at_ns = now_ns();
  end.action = static_cast<uint8_t>(CaptureWindowAction::kEnd);
  stage(&end, sizeof end);
  if (ok) ok = write_staged();
  staging.clear();
  kept_.dumped();
  ++dump_index_;
  staging_ = nullptr;
  out_ = nullptr;
  if (runtime::config().verbose) {
    char line[160];
    std::snprintf(line, sizeof line, "pid %u: flight recorder dump %u (%s)%s", out.section().pid, dump_index_ - 1,
                  trigger_text(trigger), ok ? "" : " failed: see the warning above");
    print_line(line);
  }
}

void FlightRecorderOutput::report(uint32_t pid) const noexcept {
  const RingStats& r = kept_.stats();
  char line[256];
  std::snprintf(line, sizeof line,
                "pid %u flight recorder: %llu dumps (%llu records), peak %llu KiB kept of %llu KiB, "
                "%llu records let go",
                pid, static_cast<unsigned long long>(r.dumps), static_cast<unsigned long long>(r.dumped_records),
                static_cast<unsigned long long>(r.peak_bytes >> 10),
                static_cast<unsigned long long>(kept_.max_bytes() >> 10),
                static_cast<unsigned long long>(r.evicted_records));
  print_line(line);
}

}  // namespace proflaunch::capture
