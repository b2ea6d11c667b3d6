#include "lz4_block.h"

#include <cstring>

namespace simgpu {
namespace {

// Reads an LZ4 length extension (bytes of 255 continue it). False if truncated.
bool read_length_extension(const uint8_t*& in, const uint8_t* end, size_t& length) {
  uint8_t byte = 0;
  do {
    if (in >= end) return false;
    byte = *in++;
    length += byte;
  } while (byte == 255);
  return true;
}

}  // namespace

bool lz4_block_decompress(const uint8_t* source, size_t source_bytes, uint8_t* destination, size_t destination_bytes) {
  const uint8_t* in = source;
  const uint8_t* const in_end = source + source_bytes;
  uint8_t* out = destination;
  uint8_t* const out_end = destination + destination_bytes;
  while (in < in_end) {
    const uint8_t token = *in++;
    size_t literal_bytes = token >> 4;
    if (literal_bytes == 15 && !read_length_extension(in, in_end, literal_bytes)) return false;
    if (literal_bytes > size_t(in_end - in) || literal_bytes > size_t(out_end - out)) return false;
    std::memcpy(out, in, literal_bytes);
    in += literal_bytes;
    out += literal_bytes;
    if (in == in_end) break;  // the last sequence carries literals only
    if (in_end - in < 2) return false;
    const size_t offset = size_t(in[0]) | size_t(in[1]) << 8;
    in += 2;
    if (offset == 0 || offset > size_t(out - destination)) return false;
    size_t match_bytes = token & 15;
    if (match_bytes == 15 && !read_length_extension(in, in_end, match_bytes)) return false;
    match_bytes += 4;
    if (match_bytes > size_t(out_end - out)) return false;
    const uint8_t* match = out - offset;
    for (size_t i = 0; i < match_bytes; ++i) out[i] = match[i];  // may overlap: byte by byte
    out += match_bytes;
  }
  return out == out_end;
}

}  // namespace simgpu
