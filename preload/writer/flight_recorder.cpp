#include "preload/writer/flight_recorder.h"

#include <cstring>

namespace proflaunch::capture {

using format::CaptureTrigger;

bool FlightRecorder::keep(KeptChunk&& chunk, uint64_t now_ns) noexcept {
  try {
    chunks_.push_back(std::move(chunk));
  } catch (...) {
    return false;
  }
  stats_.kept_bytes += chunks_.back().bytes();
  // The newest chunk stays even when it alone is over the bound (a chunk is
  // at most ~1 MiB compressed, far below the smallest bound).
  while (chunks_.size() > 1 && stats_.kept_bytes > max_bytes_) evict_oldest();
  if (stats_.kept_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.kept_bytes;
  expire(now_ns);
  return true;
}

void FlightRecorder::expire(uint64_t now_ns) noexcept {
  // A chunk goes once its newest record is older than the duration: what is
  // kept always covers at least the last `keep_ns`.
  while (!chunks_.empty() && now_ns > chunks_.front().last_ns &&
         now_ns - chunks_.front().last_ns > keep_ns_)
    evict_oldest();
}

void FlightRecorder::evict_oldest() noexcept {
  KeptChunk& oldest = chunks_.front();
  for (const format::MemoryOperationRecord& op : oldest.memory) before_.note(op);
  stats_.kept_bytes -= oldest.bytes();
  ++stats_.evicted_chunks;
  stats_.evicted_records += oldest.records;
  chunks_.pop_front();
}

uint64_t FlightRecorder::window_begin_ns(uint64_t now_ns) const noexcept {
  uint64_t begin = now_ns;
  for (const KeptChunk& chunk : chunks_)
    if (chunk.first_ns != 0 && chunk.first_ns < begin) begin = chunk.first_ns;
  return begin;
}

void FlightRecorder::dumped() noexcept {
  ++stats_.dumps;
  for (const KeptChunk& chunk : chunks_) stats_.dumped_records += chunk.records;
  while (!chunks_.empty()) {
    for (const format::MemoryOperationRecord& op : chunks_.front().memory) before_.note(op);
    stats_.kept_bytes -= chunks_.front().bytes();
    chunks_.pop_front();
  }
}

CaptureTrigger trigger_of_record(const void* record, uint16_t bytes) noexcept {
  uint16_t kind;
  std::memcpy(&kind, record, sizeof kind);
  if (!format::has_api_span(kind) || bytes < format::kApiSpanOffset + sizeof(format::ApiSpan))
    return CaptureTrigger{};
  int32_t result;
  std::memcpy(&result,
              static_cast<const uint8_t*>(record) + format::kApiSpanOffset + offsetof(format::ApiSpan, result),
              sizeof result);
  if (result == 0) return CaptureTrigger{};
  switch (result) {
    case 214:  // ECC uncorrectable
    case 700:  // illegal address
    case 702:  // launch timeout
    case 710:  // device-side assert
    case 714:  // hardware stack error
    case 715:  // illegal instruction
    case 716:  // misaligned address
    case 717:  // invalid address space
    case 718:  // invalid program counter
    case 719:  // launch failed
      return CaptureTrigger::kStickyError;
    default: break;
  }
  // Out of memory (CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation and
  // hipErrorOutOfMemory are all 2), only for an allocation: NCCL's 2 means
  // something else.
  if (result == 2 && kind == static_cast<uint16_t>(format::RecordKind::kMemoryOperation) &&
      bytes >= sizeof(format::MemoryOperationRecord)) {
    format::MemoryOperationRecord op;
    std::memcpy(&op, record, sizeof op);
    if (static_cast<format::MemoryAction>(op.action) == format::MemoryAction::kAcquire)
      return CaptureTrigger::kOutOfMemory;
  }
  return CaptureTrigger{};
}

}  // namespace proflaunch::capture
