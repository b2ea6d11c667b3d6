// A 64-bit hash of a stack's frames: the key of the dedup tables. Two
// different stacks with the same hash would share an id (the second would be
// shown as the first); with 64 bits that takes ~4 billion distinct stacks in
// one process to become likely.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch::stacks {

inline uint64_t mix64(uint64_t h) noexcept {
  // MurmurHash3's finalizer: every input bit affects every output bit.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

class FrameHasher {
 public:
  explicit FrameHasher(uint64_t seed) noexcept : h_(seed) {}
  // One multiply per word (a stack is hashed on every event); finish()
  // mixes the result fully.
  void add(uint64_t word) noexcept {
    h_ = (h_ ^ word) * 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
  }
  // Never 0: the tables use 0 for an empty slot.
  uint64_t finish() const noexcept {
    const uint64_t h = mix64(h_);
    return h != 0 ? h : 1;
  }

 private:
  uint64_t h_;
};

}  // namespace proflaunch::stacks
