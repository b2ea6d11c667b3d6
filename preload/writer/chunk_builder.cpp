#include "preload/writer/chunk_builder.h"

#include <cstring>
#include <new>

#include "formats/records.h"

namespace proflaunch {

using namespace format;

bool EventChunkBuilder::init(size_t capacity_bytes) noexcept {
  content_.reset(new (std::nothrow) uint8_t[capacity_bytes]);
  capacity_bytes_ = content_ ? capacity_bytes : 0;
  clear();
  return content_ != nullptr;
}

bool EventChunkBuilder::append(uint32_t tid, const void* record, uint16_t bytes,
                               uint64_t now_ns) noexcept {
  const bool needs_batch = !has_batch_ || tid != current_tid_;
  const size_t needed = bytes + (needs_batch ? sizeof(ThreadBatchRecord) : 0);
  if (used_bytes_ + needed > capacity_bytes_) return false;
  if (used_bytes_ == 0) first_append_ns_ = now_ns;
  if (needs_batch) {
    ThreadBatchRecord batch{};
    batch.header = header_for<ThreadBatchRecord>();
    batch.tid = tid;
    std::memcpy(content_.get() + used_bytes_, &batch, sizeof batch);
    delta_.encode(content_.get() + used_bytes_, sizeof batch);
    used_bytes_ += sizeof batch;
    current_tid_ = tid;
    has_batch_ = true;
  }
  std::memcpy(content_.get() + used_bytes_, record, bytes);
  delta_.encode(content_.get() + used_bytes_, bytes);
  used_bytes_ += bytes;

  RecordHeader header;
  std::memcpy(&header, record, sizeof header);
  LostRecord lost{};
  if (header.kind == static_cast<uint16_t>(RecordKind::kLost) && bytes >= sizeof(LostRecord)) {
    std::memcpy(&lost, record, sizeof lost);
  }
  // GPU work outside the capture windows is dropped on purpose, not lost.
  if (header.kind == static_cast<uint16_t>(RecordKind::kLost) && bytes >= sizeof(LostRecord) &&
      lost.reason != static_cast<uint32_t>(LostReason::kOutsideCaptureWindow)) {
    lost_records_ += lost.count;
  } else {
    ++event_records_;
  }
  return true;
}

void EventChunkBuilder::clear() noexcept {
  delta_.reset();
  used_bytes_ = 0;
  has_batch_ = false;
  current_tid_ = 0;
  first_append_ns_ = 0;
  event_records_ = 0;
  lost_records_ = 0;
}

bool ChunkWriterBuffer::init(size_t max_content_bytes) noexcept {
  try {
    encoder_ = std::make_unique<ChunkEncoder>(1);
  } catch (...) {
    return false;
  }
  if (!encoder_->ok()) return false;
  capacity_bytes_ = max_encoded_chunk_bytes(max_content_bytes);
  output_.reset(new (std::nothrow) uint8_t[capacity_bytes_]);
  return output_ != nullptr;
}

size_t ChunkWriterBuffer::encode(ChunkKind kind, uint64_t section_id, const void* content,
                                 size_t content_bytes) noexcept {
  if (!output_) return 0;
  // Events chunks come from EventChunkBuilder, which delta-codes its records.
  const uint16_t flags = kind == ChunkKind::kEvents ? kChunkFlagRecordDelta : 0;
  return encoder_->encode(kind, section_id, content, content_bytes, output_.get(), capacity_bytes_,
                          flags);
}

size_t whole_records_prefix(const uint8_t* records, size_t bytes, size_t limit) noexcept {
  size_t offset = 0;
  while (offset + sizeof(RecordHeader) <= bytes) {
    RecordHeader header;
    std::memcpy(&header, records + offset, sizeof header);
    if (header.bytes < sizeof header || offset + header.bytes > bytes) break;  // malformed: stop
    if (offset != 0 && offset + header.bytes > limit) break;
    offset += header.bytes;
  }
  return offset;
}

}  // namespace proflaunch
