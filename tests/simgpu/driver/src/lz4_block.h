// Decoder for the LZ4 block format (no frame header), which nvcc uses for
// fatbin entries compressed with -compress-mode=speed (entry flag 0x2000).
#pragma once

#include <cstddef>
#include <cstdint>

namespace simgpu {

// Decodes `source` into exactly `destination_bytes` bytes. False on malformed or
// truncated input, or if the output would not be exactly that size.
bool lz4_block_decompress(const uint8_t* source, size_t source_bytes, uint8_t* destination, size_t destination_bytes);

}  // namespace simgpu
