#include "fatbin.h"

#include <zstd.h>

#include <cstring>

#include "lz4_block.h"

namespace simgpu {
namespace {

constexpr uint64_t kFlagCompressedLz4 = 0x2000;
constexpr uint64_t kFlagCompressedZstd = 0x8000;
constexpr size_t kEntryHeaderMinimumBytes = 0x40;
constexpr uint64_t kMaxUncompressedBytes = 1ull << 31;

template <class T>
T read(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

bool decompress(const uint8_t* source, size_t source_bytes, uint64_t flags, uint64_t uncompressed_bytes,
                std::vector<uint8_t>& out, std::string& error) {
  if (uncompressed_bytes == 0 || uncompressed_bytes > kMaxUncompressedBytes) {
    error = "compressed fatbin entry has an implausible uncompressed size";
    return false;
  }
  out.resize(uncompressed_bytes);
  if (flags & kFlagCompressedZstd) {
    size_t written = ZSTD_decompress(out.data(), out.size(), source, source_bytes);
    if (ZSTD_isError(written) || written != out.size()) {
      error = "zstd-compressed fatbin entry does not decompress";
      return false;
    }
    return true;
  }
  if (!lz4_block_decompress(source, source_bytes, out.data(), out.size())) {
    error = "LZ4-compressed fatbin entry does not decompress";
    return false;
  }
  return true;
}

}  // namespace

size_t fatbin_container_bytes(const uint8_t* header) {
  if (read<uint32_t>(header) != kFatbinMagic) return 0;
  const uint16_t header_bytes = read<uint16_t>(header + 6);
  const uint64_t entries_bytes = read<uint64_t>(header + 8);
  if (header_bytes < kFatbinHeaderBytes || entries_bytes > kMaxUncompressedBytes) return 0;
  return header_bytes + entries_bytes;
}

bool parse_fatbin(const uint8_t* data, size_t bytes, std::vector<FatbinEntry>& entries, std::string& error) {
  if (bytes < kFatbinHeaderBytes || fatbin_container_bytes(data) == 0 || fatbin_container_bytes(data) > bytes) {
    error = "not a complete fatbin container";
    return false;
  }
  const size_t end = fatbin_container_bytes(data);
  size_t position = read<uint16_t>(data + 6);
  while (position < end) {
    if (end - position < kEntryHeaderMinimumBytes) {
      error = "truncated fatbin entry header";
      return false;
    }
    const uint8_t* entry = data + position;
    const uint16_t kind = read<uint16_t>(entry);
    const uint32_t header_bytes = read<uint32_t>(entry + 4);
    const uint64_t payload_bytes = read<uint64_t>(entry + 8);
    const uint32_t compressed_bytes = read<uint32_t>(entry + 16);
    const uint32_t sm_arch = read<uint32_t>(entry + 28);
    const uint64_t flags = read<uint64_t>(entry + 40);
    const uint64_t uncompressed_bytes = read<uint64_t>(entry + 56);
    if (header_bytes < kEntryHeaderMinimumBytes || header_bytes > end - position ||
        payload_bytes > end - position - header_bytes) {
      error = "fatbin entry extends past the container";
      return false;
    }
    const uint8_t* payload = entry + header_bytes;
    if (kind == uint16_t(FatbinEntryKind::kPtx) || kind == uint16_t(FatbinEntryKind::kElf)) {
      FatbinEntry parsed;
      parsed.kind = FatbinEntryKind(kind);
      parsed.sm_arch = int(sm_arch);
      if (flags & (kFlagCompressedLz4 | kFlagCompressedZstd)) {
        if (compressed_bytes == 0 || compressed_bytes > payload_bytes) {
          error = "compressed fatbin entry has a bad compressed size";
          return false;
        }
        if (!decompress(payload, compressed_bytes, flags, uncompressed_bytes, parsed.payload, error)) return false;
      } else {
        parsed.payload.assign(payload, payload + payload_bytes);
      }
      if (parsed.kind == FatbinEntryKind::kPtx) parsed.payload.push_back(0);
      entries.push_back(std::move(parsed));
    }
    position += header_bytes + payload_bytes;
  }
  return true;
}

}  // namespace simgpu
