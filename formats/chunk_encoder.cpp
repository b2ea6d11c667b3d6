#include "formats/chunk_encoder.h"

#include <zstd.h>

#include <array>
#include <cstring>

namespace proflaunch::format {
namespace {

constexpr std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr auto kCrcTable = make_crc_table();

}  // namespace

uint32_t crc32(const void* data, size_t bytes, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
  crc = ~crc;
  for (size_t i = 0; i < bytes; ++i) crc = kCrcTable[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

FileHeader make_file_header() {
  FileHeader h{};
  std::memcpy(h.magic, kFileMagic, sizeof h.magic);
  h.format_version = kFormatVersion;
  h.header_bytes = sizeof(FileHeader);
  h.required_features = kFeatureRecordDelta;
  h.optional_features = 0;
  return h;
}

ChunkHeader make_chunk_header(ChunkKind kind, uint64_t section_id, uint32_t payload_bytes,
                              uint16_t flags) {
  ChunkHeader h{};
  h.magic = kChunkMagic;
  h.kind = static_cast<uint16_t>(kind);
  h.flags = flags;
  h.section_id = section_id;
  h.payload_bytes = payload_bytes;
  h.header_crc32 = crc32(&h, offsetof(ChunkHeader, header_crc32));
  return h;
}

size_t max_encoded_chunk_bytes(size_t content_bytes) {
  return sizeof(ChunkHeader) + ZSTD_compressBound(content_bytes);
}

ChunkEncoder::ChunkEncoder(int zstd_level) : level_(zstd_level) {
  cctx_ = ZSTD_createCCtx();
  if (cctx_ == nullptr) return;
  if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level_)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1)) ||
      ZSTD_isError(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 1))) {
    ZSTD_freeCCtx(cctx_);
    cctx_ = nullptr;
  }
}

ChunkEncoder::~ChunkEncoder() { ZSTD_freeCCtx(cctx_); }

size_t ChunkEncoder::encode(ChunkKind kind, uint64_t section_id, const void* content,
                            size_t content_bytes, void* out, size_t capacity, uint16_t flags) {
  if (cctx_ == nullptr || capacity < sizeof(ChunkHeader) || content_bytes > kMaxChunkContentBytes)
    return 0;
  auto* dst = static_cast<uint8_t*>(out);
  const size_t frame = ZSTD_compress2(cctx_, dst + sizeof(ChunkHeader),
                                      capacity - sizeof(ChunkHeader), content, content_bytes);
  if (ZSTD_isError(frame) || frame > kMaxChunkPayloadBytes) return 0;
  const ChunkHeader header = make_chunk_header(kind, section_id, static_cast<uint32_t>(frame), flags);
  std::memcpy(dst, &header, sizeof header);
  return sizeof(ChunkHeader) + frame;
}

}  // namespace proflaunch::format
