// Delta coding of event records inside one chunk, before compression.
//
// A training loop repeats the same few operations: consecutive launches of a
// kernel differ in their timestamps and correlation id and little else. Each
// record is stored as the difference from the previous record of the same
// kind in the same chunk (same size), taken in lanes that match the record
// layouts: the 4-byte header stays as it is (a reader must see kind and
// size), bytes 4..8 are one 32-bit lane, then 64-bit lanes from offset 8 (all
// 8-byte fields of the event records sit on 8-byte offsets), and a tail of
// fewer than 8 bytes goes byte by byte. Timestamps become small increments,
// repeated handles zeros; zstd compresses the result smaller and faster.
//
// The state resets at every chunk, so chunks stay independently decodable.
// Records larger than kMaxDeltaRecordBytes, kinds of 256 and above, and the
// first record of a kind in a chunk are stored as they are.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch::format {

inline constexpr size_t kMaxDeltaRecordBytes = 128;

class RecordDeltaCoder {
 public:
  // Forget every previous record (a chunk starts).
  void reset() noexcept { ++generation_; }

  // Turns `record` (whole, header included, `bytes` long) into its delta
  // form in place, and remembers its original for the next one.
  void encode(uint8_t* record, uint16_t bytes) noexcept;

  // The inverse: `record` holds the delta form and becomes the original.
  void decode(uint8_t* record, uint16_t bytes) noexcept;

 private:
  bool has_previous(uint16_t kind, uint16_t bytes) const noexcept;
  void remember(uint16_t kind, const uint8_t* record, uint16_t bytes) noexcept;

  uint32_t generation_ = 1;
  uint32_t valid_generation_[256] = {};
  uint16_t previous_bytes_[256] = {};
  uint8_t previous_[256][kMaxDeltaRecordBytes];
};

// Undoes the delta coding of a whole chunk's content in place. False when
// the records do not walk (a size field points past the end or below the
// header size): the chunk is corrupt.
bool undo_record_delta(uint8_t* content, size_t bytes) noexcept;

}  // namespace proflaunch::format
