// Encoding side of the trace framing: the file header and one chunk (header +
// zstd frame) at a time. Used by the shim's writer thread and by tools that
// write traces (join, tests). No allocation per chunk after construction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/records.h"

struct ZSTD_CCtx_s;

namespace proflaunch::format {

// CRC-32 with the zlib/IEEE polynomial (0xEDB88320 reflected).
uint32_t crc32(const void* data, size_t bytes, uint32_t crc = 0);

FileHeader make_file_header();

// Fills magic, kind, flags, section, payload size and the header CRC.
ChunkHeader make_chunk_header(ChunkKind kind, uint64_t section_id, uint32_t payload_bytes,
                              uint16_t flags = 0);

// Largest encoded chunk (header + frame) for `content_bytes` of records.
size_t max_encoded_chunk_bytes(size_t content_bytes);

class ChunkEncoder {
 public:
  explicit ChunkEncoder(int zstd_level = 1);
  ~ChunkEncoder();
  ChunkEncoder(const ChunkEncoder&) = delete;
  ChunkEncoder& operator=(const ChunkEncoder&) = delete;

  bool ok() const { return cctx_ != nullptr; }

  // Compresses `content` (whole records) into one zstd frame with a content
  // checksum, preceded by its ChunkHeader, into `out`. Returns the number of
  // bytes written, or 0 when `capacity` is too small or zstd failed.
  size_t encode(ChunkKind kind, uint64_t section_id, const void* content, size_t content_bytes,
                void* out, size_t capacity, uint16_t flags = 0);

 private:
  ZSTD_CCtx_s* cctx_ = nullptr;
  int level_;
};

}  // namespace proflaunch::format
