#include "formats/record_delta.h"

#include <cstring>
#include <memory>

#include "formats/records.h"

namespace proflaunch::format {
namespace {

// One pass over the lanes: the record becomes its delta (encode) or its
// original (decode), and `previous` becomes the original either way.
template <typename Lane, bool kEncode>
void apply_lane(uint8_t* at, uint8_t* previous) {
  Lane value, base;
  std::memcpy(&value, at, sizeof value);
  std::memcpy(&base, previous, sizeof base);
  const Lane original = kEncode ? value : static_cast<Lane>(value + base);
  const Lane stored = kEncode ? static_cast<Lane>(value - base) : original;
  std::memcpy(at, &stored, sizeof stored);
  std::memcpy(previous, &original, sizeof original);
}

template <bool kEncode>
void apply(uint8_t* record, uint8_t* previous, uint16_t bytes) {
  std::memcpy(previous, record, sizeof(RecordHeader));
  apply_lane<uint32_t, kEncode>(record + 4, previous + 4);
  size_t offset = 8;
  for (; offset + 8 <= bytes; offset += 8) apply_lane<uint64_t, kEncode>(record + offset, previous + offset);
  for (; offset < bytes; ++offset) apply_lane<uint8_t, kEncode>(record + offset, previous + offset);
}

uint16_t kind_of(const uint8_t* record) {
  uint16_t kind;
  std::memcpy(&kind, record, sizeof kind);
  return kind;
}

}  // namespace

bool RecordDeltaCoder::has_previous(uint16_t kind, uint16_t bytes) const noexcept {
  return kind < 256 && valid_generation_[kind] == generation_ && previous_bytes_[kind] == bytes;
}

void RecordDeltaCoder::remember(uint16_t kind, const uint8_t* record, uint16_t bytes) noexcept {
  if (kind >= 256 || bytes > kMaxDeltaRecordBytes) return;
  std::memcpy(previous_[kind], record, bytes);
  previous_bytes_[kind] = bytes;
  valid_generation_[kind] = generation_;
}

void RecordDeltaCoder::encode(uint8_t* record, uint16_t bytes) noexcept {
  if (bytes < 8 || bytes > kMaxDeltaRecordBytes) return;
  const uint16_t kind = kind_of(record);
  if (has_previous(kind, bytes))
    apply<true>(record, previous_[kind], bytes);
  else
    remember(kind, record, bytes);
}

void RecordDeltaCoder::decode(uint8_t* record, uint16_t bytes) noexcept {
  if (bytes < 8 || bytes > kMaxDeltaRecordBytes) return;
  const uint16_t kind = kind_of(record);
  if (has_previous(kind, bytes))
    apply<false>(record, previous_[kind], bytes);
  else
    remember(kind, record, bytes);
}

bool undo_record_delta(uint8_t* content, size_t bytes) noexcept {
  // ~32 KiB of state: on the heap, and one per call (chunks are ~1 MiB).
  auto coder = std::make_unique<RecordDeltaCoder>();
  size_t offset = 0;
  while (offset < bytes) {
    if (bytes - offset < sizeof(RecordHeader)) return false;
    RecordHeader header;
    std::memcpy(&header, content + offset, sizeof header);
    if (header.bytes < sizeof(RecordHeader) || header.bytes > bytes - offset) return false;
    coder->decode(content + offset, header.bytes);
    offset += header.bytes;
  }
  return true;
}

}  // namespace proflaunch::format
