// The writer's staging area for one Events chunk (~1 MiB of records) and the
// encoding of chunks. Inserts a ThreadBatch record whenever the producing
// thread changes, at the start of every chunk too, so each chunk decodes on
// its own. Counts what it holds so the writer can total the section.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "formats/chunk_encoder.h"
#include "formats/record_delta.h"

namespace proflaunch {

inline constexpr size_t kChunkContentBytes = size_t{1} << 20;

class EventChunkBuilder {
 public:
  bool init(size_t capacity_bytes) noexcept;

  // Copies one record produced by thread `tid`; false when the chunk is full.
  bool append(uint32_t tid, const void* record, uint16_t bytes, uint64_t now_ns) noexcept;
  // Whether append(tid, ..., bytes, ...) would succeed.
  bool fits(uint32_t tid, uint16_t bytes) const noexcept {
    const bool needs_batch = !has_batch_ || tid != current_tid_;
    return used_bytes_ + bytes + (needs_batch ? sizeof(format::ThreadBatchRecord) : 0) <= capacity_bytes_;
  }

  bool empty() const noexcept { return used_bytes_ == 0; }
  const uint8_t* content() const noexcept { return content_.get(); }
  size_t content_bytes() const noexcept { return used_bytes_; }
  // When the oldest record still staged was drained.
  uint64_t first_append_ns() const noexcept { return first_append_ns_; }
  // Records from the hooks (not ThreadBatch, not LOST).
  uint64_t event_records() const noexcept { return event_records_; }
  // Sum of the counts of the LOST records staged.
  uint64_t lost_records() const noexcept { return lost_records_; }

  void clear() noexcept;

 private:
  std::unique_ptr<uint8_t[]> content_;
  size_t capacity_bytes_ = 0;
  size_t used_bytes_ = 0;
  uint32_t current_tid_ = 0;
  bool has_batch_ = false;
  uint64_t first_append_ns_ = 0;
  uint64_t event_records_ = 0;
  uint64_t lost_records_ = 0;
  // Records are stored delta-coded (chunks carry kChunkFlagRecordDelta).
  format::RecordDeltaCoder delta_;
};

// Compresses chunk content into one reusable output buffer.
class ChunkWriterBuffer {
 public:
  bool init(size_t max_content_bytes) noexcept;
  // The encoded chunk (header + frame) and its size; size 0 on failure.
  size_t encode(format::ChunkKind kind, uint64_t section_id, const void* content,
                size_t content_bytes) noexcept;
  const uint8_t* data() const noexcept { return output_.get(); }

 private:
  std::unique_ptr<format::ChunkEncoder> encoder_;
  std::unique_ptr<uint8_t[]> output_;
  size_t capacity_bytes_ = 0;
};

// Walks a sequence of whole records and returns how many leading bytes form
// whole records not exceeding `limit` bytes (at least one record, even a
// larger one).
size_t whole_records_prefix(const uint8_t* records, size_t bytes, size_t limit) noexcept;

}  // namespace proflaunch
