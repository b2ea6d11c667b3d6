// Decoding side of one chunk payload: checks that it is exactly one zstd frame
// that declares its content size and carries a content checksum, and
// decompresses it into a buffer reused from chunk to chunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

struct ZSTD_DCtx_s;

namespace proflaunch::format {

enum class DecodeStatus {
  kOk,
  kNotZstdFrame,       // no zstd frame magic, or a skippable frame
  kNoContentSize,      // frame header does not declare the decompressed size
  kTooLarge,           // declared size above the reader's limit
  kNoChecksum,         // frame written without a content checksum
  kFrameSizeMismatch,  // the frame is shorter or longer than the chunk payload
  kCorruptFrame,       // zstd rejected the data
  kChecksumMismatch,   // decompressed, but the content checksum is wrong
  kOutOfMemory,
};

std::string_view describe(DecodeStatus status);

class ChunkDecoder {
 public:
  ChunkDecoder();
  ~ChunkDecoder();
  ChunkDecoder(const ChunkDecoder&) = delete;
  ChunkDecoder& operator=(const ChunkDecoder&) = delete;

  // Decompresses `payload`. On kOk, content()/content_bytes() hold the
  // records until the next call.
  DecodeStatus decode(const uint8_t* payload, size_t payload_bytes, size_t max_content_bytes);

  const uint8_t* content() const { return content_.get(); }
  size_t content_bytes() const { return content_bytes_; }

 private:
  ZSTD_DCtx_s* dctx_ = nullptr;
  // Not a std::vector: growing it would zero-fill up to 64 MiB per chunk.
  std::unique_ptr<uint8_t[]> content_;
  size_t capacity_ = 0;
  size_t content_bytes_ = 0;
};

}  // namespace proflaunch::format
