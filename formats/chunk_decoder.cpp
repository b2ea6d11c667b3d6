#include "formats/chunk_decoder.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <new>

namespace proflaunch::format {
namespace {

constexpr uint32_t kZstdFrameMagic = 0xFD2FB528u;
// RFC 8878 3.1.1.1.1: bit 2 of the Frame_Header_Descriptor (the byte after
// the magic) is Content_Checksum_flag. Parsed by hand because
// ZSTD_getFrameHeader is only in zstd's experimental (static-only) API.
constexpr uint8_t kContentChecksumFlag = 1u << 2;

}  // namespace

std::string_view describe(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::kOk: return "ok";
    case DecodeStatus::kNotZstdFrame: return "payload is not a zstd frame";
    case DecodeStatus::kNoContentSize: return "zstd frame does not declare its content size";
    case DecodeStatus::kTooLarge: return "declared content size exceeds the chunk limit";
    case DecodeStatus::kNoChecksum: return "zstd frame has no content checksum";
    case DecodeStatus::kFrameSizeMismatch: return "zstd frame size does not match the chunk payload size";
    case DecodeStatus::kCorruptFrame: return "zstd frame is corrupt";
    case DecodeStatus::kChecksumMismatch: return "zstd content checksum mismatch";
    case DecodeStatus::kOutOfMemory: return "out of memory";
  }
  return "unknown decode status";
}

ChunkDecoder::ChunkDecoder() : dctx_(ZSTD_createDCtx()) {}
ChunkDecoder::~ChunkDecoder() { ZSTD_freeDCtx(dctx_); }

DecodeStatus ChunkDecoder::decode(const uint8_t* payload, size_t payload_bytes,
                                  size_t max_content_bytes) {
  content_bytes_ = 0;
  if (dctx_ == nullptr) return DecodeStatus::kOutOfMemory;
  if (payload_bytes < 5) return DecodeStatus::kNotZstdFrame;
  const uint32_t magic = static_cast<uint32_t>(payload[0]) | static_cast<uint32_t>(payload[1]) << 8 |
                         static_cast<uint32_t>(payload[2]) << 16 |
                         static_cast<uint32_t>(payload[3]) << 24;
  if (magic != kZstdFrameMagic) return DecodeStatus::kNotZstdFrame;
  if ((payload[4] & kContentChecksumFlag) == 0) return DecodeStatus::kNoChecksum;

  const unsigned long long declared = ZSTD_getFrameContentSize(payload, payload_bytes);
  if (declared == ZSTD_CONTENTSIZE_ERROR) return DecodeStatus::kCorruptFrame;
  if (declared == ZSTD_CONTENTSIZE_UNKNOWN) return DecodeStatus::kNoContentSize;
  if (declared > max_content_bytes) return DecodeStatus::kTooLarge;

  // Exactly one frame: trailing bytes would be a second frame that the
  // one-shot API would silently decompress and append.
  const size_t frame_bytes = ZSTD_findFrameCompressedSize(payload, payload_bytes);
  if (ZSTD_isError(frame_bytes)) return DecodeStatus::kCorruptFrame;
  if (frame_bytes != payload_bytes) return DecodeStatus::kFrameSizeMismatch;

  const size_t wanted = static_cast<size_t>(declared);
  if (wanted > capacity_) {
    content_.reset(new (std::nothrow) uint8_t[wanted]);
    capacity_ = content_ ? wanted : 0;
    if (!content_) return DecodeStatus::kOutOfMemory;
  }
  if (wanted == 0) return DecodeStatus::kOk;

  const size_t got = ZSTD_decompressDCtx(dctx_, content_.get(), wanted, payload, payload_bytes);
  if (ZSTD_isError(got)) {
    return ZSTD_getErrorCode(got) == ZSTD_error_checksum_wrong ? DecodeStatus::kChecksumMismatch
                                                              : DecodeStatus::kCorruptFrame;
  }
  if (got != wanted) return DecodeStatus::kCorruptFrame;
  content_bytes_ = got;
  return DecodeStatus::kOk;
}

}  // namespace proflaunch::format
