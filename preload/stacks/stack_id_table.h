// A fixed-size, open-addressing hash table from a stack's hash to its id,
// read lock-free on every captured stack and written only on the cold path
// (one writer at a time, under the stack catalog's mutex).
//
// Slots are never removed, so a reader that finds a hash finds it for good.
// The writer stores the id before publishing the hash (release); a reader
// that sees the hash (acquire) sees the id. The memory is mapped once at
// start (MAP_NORESERVE: untouched pages cost nothing) and never freed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace proflaunch::stacks {

class StackIdTable {
 public:
  // `capacity` is rounded up to a power of two. False when the mapping failed.
  bool init(size_t capacity) noexcept;

  // The id stored for `hash` (never 0), or 0 when there is none.
  uint32_t find(uint64_t hash) const noexcept {
    if (slots_ == nullptr) return 0;
    for (size_t i = hash & mask_, probes = 0; probes <= mask_; i = (i + 1) & mask_, ++probes) {
      const uint64_t stored = slots_[i].hash.load(std::memory_order_acquire);
      if (stored == hash) return slots_[i].id.load(std::memory_order_relaxed);
      if (stored == 0) return 0;
    }
    return 0;
  }

  // Cold path, one writer at a time. False when the table is full (kept at
  // most 3/4 full so that probes stay short).
  bool insert(uint64_t hash, uint32_t id) noexcept;

  bool full() const noexcept { return used_ >= limit_; }
  size_t used() const noexcept { return used_; }

 private:
  struct Slot {
    std::atomic<uint64_t> hash;
    std::atomic<uint32_t> id;
    uint32_t unused;
  };
  static_assert(sizeof(Slot) == 16);

  Slot* slots_ = nullptr;
  size_t mask_ = 0;
  size_t used_ = 0;
  size_t limit_ = 0;
};

}  // namespace proflaunch::stacks
