// A thread's sample buffer: a single-producer, single-consumer byte ring.
// The producer is the thread's sampling signal handler (nothing else writes
// it), the consumer the writer thread. No lock, no allocation: the memory is
// part of the thread's sampler mapping (thread_sampler.h).
//
// An entry is reserved whole and contiguous (an entry that would cross the
// end leaves a padding entry and starts at 0), filled in place, then
// published by one release store of `head`. The writer reads up to `head`
// (acquire) and frees by a release store of `tail`.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "preload/sampling/sample_entry.h"

namespace proflaunch::sampling {

inline constexpr uint32_t kSampleBufferBytes = uint32_t{256} << 10;

struct SampleBuffer {
  std::atomic<uint64_t> head;  // bytes ever published (producer)
  std::atomic<uint64_t> tail;  // bytes ever consumed (consumer)
  alignas(64) uint8_t data[kSampleBufferBytes];

  // Producer: room for `max_bytes` (a multiple of 8) at a contiguous place,
  // or nullptr (full). Call publish() with the bytes actually used.
  uint8_t* reserve(uint32_t max_bytes, uint64_t* at) noexcept {
    uint64_t h = head.load(std::memory_order_relaxed);
    const uint64_t t = tail.load(std::memory_order_acquire);
    uint32_t offset = static_cast<uint32_t>(h % kSampleBufferBytes);
    uint32_t skip = 0;
    if (offset + max_bytes > kSampleBufferBytes) skip = kSampleBufferBytes - offset;
    if (h + skip + max_bytes - t > kSampleBufferBytes) return nullptr;
    if (skip != 0) {
      auto* pad = reinterpret_cast<SampleEntry*>(data + offset);
      pad->bytes = skip;
      pad->kind = kEntryPadding;
      h += skip;
      head.store(h, std::memory_order_release);
      offset = 0;
    }
    *at = h;
    return data + offset;
  }
  void publish(uint64_t at, uint32_t bytes) noexcept { head.store(at + bytes, std::memory_order_release); }

  // Consumer: calls `take(const SampleEntry&)` for each published entry.
  template <typename Take>
  void drain(Take&& take) noexcept {
    const uint64_t h = head.load(std::memory_order_acquire);
    uint64_t t = tail.load(std::memory_order_relaxed);
    while (t < h) {
      const auto* entry = reinterpret_cast<const SampleEntry*>(data + t % kSampleBufferBytes);
      const uint32_t bytes = entry->bytes;
      if (bytes < 8 || bytes > kSampleBufferBytes || (bytes & 7) != 0) {  // cannot happen: drop all
        t = h;
        break;
      }
      if (entry->kind == kEntrySample) take(*entry);
      t += bytes;
    }
    tail.store(t, std::memory_order_release);
  }
  bool empty() const noexcept {
    return head.load(std::memory_order_acquire) == tail.load(std::memory_order_acquire);
  }
  void reset() noexcept {
    head.store(0, std::memory_order_relaxed);
    tail.store(0, std::memory_order_relaxed);
  }
};

}  // namespace proflaunch::sampling
