// One thread's ring of committed records: single producer (the owning thread,
// the hot path) and single consumer (the writer thread).
//
// Records are written in place: reserve() hands out the slot, the caller fills
// it, commit() publishes it with one release store. Positions are monotonic
// byte counters; slots are 8-byte strides so a record never straddles the
// wrap point: when one would, the producer fills the rest of the ring with a
// pad marker (kind 0) and starts again at offset 0.
//
// When the ring is full the record is dropped and counted (count, first and
// last time); the next reservation that succeeds first places a LostRecord
// for them, so the gap sits where it happened in the thread's stream.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/records.h"

namespace proflaunch {

inline constexpr uint64_t kSlotAlignBytes = 8;
inline constexpr uint16_t kPadKind = 0;  // no RecordKind is 0
// The largest record the hot path accepts; a ring holds many of them.
inline constexpr uint32_t kMaxEventRecordBytes = 8192;

// Counted calls (format::ApiCountRecord): one counter per API id.
inline constexpr uint32_t kCountedApiSlots = 4096;

inline constexpr uint64_t slot_stride(uint64_t bytes) {
  return (bytes + kSlotAlignBytes - 1) & ~(kSlotAlignBytes - 1);
}

struct DrainResult {
  uint64_t records = 0;
  bool corrupt = false;  // a malformed header: the rest of the ring was discarded
};

class ThreadBuffer {
 public:
  // `data` must hold `capacity_bytes` (a power of two, >= 2 * kMaxEventRecordBytes).
  void init(uint8_t* data, uint64_t capacity_bytes, uint32_t tid, pthread_t thread) noexcept;

  // ---- producer side (the owning thread only)

  // A slot for `bytes` (<= kMaxEventRecordBytes), or nullptr when the ring is
  // full (the record is then counted as dropped). The slot is private until
  // commit(); another reserve() before commit() abandons it.
  void* reserve(uint32_t bytes) noexcept {
    const uint64_t stride = slot_stride(bytes);
    const uint64_t head = head_.load(std::memory_order_relaxed);
    const uint64_t offset = head & (capacity_bytes_ - 1);
    if (__builtin_expect(capacity_bytes_ - offset >= stride &&
                             head + stride - cached_tail_ <= capacity_bytes_ &&
                             lost_count_.load(std::memory_order_relaxed) == 0,
                         1)) {
      reserved_head_ = head + stride;
      return data_ + offset;
    }
    return reserve_slow(stride);
  }

  // Publishes the slot handed out by the last reserve().
  void commit() noexcept { head_.store(reserved_head_, std::memory_order_release); }

  // Bytes committed so far (monotonic). The producer's own view.
  uint64_t committed_bytes() const noexcept { return head_.load(std::memory_order_relaxed); }

  // One more call of `api` that is counted, not recorded. A plain increment
  // (no read-modify-write across threads: only this thread writes it).
  void count_call(uint16_t api) noexcept {
    std::atomic<uint32_t>& counter = call_counts_[api & (kCountedApiSlots - 1)];
    counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (!calls_counted_.load(std::memory_order_relaxed)) calls_counted_.store(true, std::memory_order_release);
  }

  // ---- consumer side (the writer thread only)

  bool has_records() const noexcept {
    return head_.load(std::memory_order_acquire) != tail_.load(std::memory_order_relaxed);
  }

  // Hands every committed record, oldest first, to `sink(const void* record,
  // uint16_t bytes)`; stops early (keeping the record) when the sink returns
  // false. Frees the space as it goes.
  template <typename Sink>
  DrainResult drain(Sink&& sink) noexcept {
    DrainResult result;
    uint64_t tail = tail_.load(std::memory_order_relaxed);
    const uint64_t head = head_.load(std::memory_order_acquire);
    while (tail != head) {
      const uint64_t offset = tail & (capacity_bytes_ - 1);
      format::RecordHeader header;
      std::memcpy(&header, data_ + offset, sizeof header);
      if (header.kind == kPadKind) {
        tail += capacity_bytes_ - offset;
        continue;
      }
      const uint64_t stride = slot_stride(header.bytes);
      if (header.bytes < sizeof header || stride > capacity_bytes_ - offset ||
          stride > head - tail) {
        // A hook wrote past its record. Nothing after this point can be
        // trusted; dropping it beats handing garbage to the tools.
        result.corrupt = true;
        tail = head;
        break;
      }
      if (!sink(static_cast<const void*>(data_ + offset), header.bytes)) break;
      tail += stride;
      ++result.records;
    }
    tail_.store(tail, std::memory_order_release);
    return result;
  }

  // Drops not yet reported by an in-band LostRecord. Only meaningful once the
  // producer has stopped (thread exited, or the final drain at process exit).
  struct PendingLoss {
    uint64_t count, first_ns, last_ns;
  };
  PendingLoss take_pending_loss() noexcept;

  // The calls counted since the last take, as (api, count) pairs handed to
  // `sink`; the counters keep running. Writer only. Without `all`, only when
  // the thread counted something since the last take; an increment that
  // races with the take is reported by a later one, and the last take of a
  // thread (exit, final drain) passes `all` so that none is left behind.
  template <typename Sink>
  void take_call_counts(bool all, Sink&& sink) noexcept {
    if (!calls_counted_.exchange(false, std::memory_order_acquire) && !all) return;
    for (uint32_t api = 0; api < kCountedApiSlots; ++api) {
      const uint32_t now = call_counts_[api].load(std::memory_order_relaxed);
      const uint32_t delta = now - taken_counts_[api];  // modulo 2^32: fine between two takes
      if (delta == 0) continue;
      taken_counts_[api] = now;
      sink(static_cast<uint16_t>(api), delta);
    }
  }

  // Where the next ApiCount window starts: when the thread attached (set
  // before the ring is published, so before its first count), then the
  // writer's reading just before each take. No call the next take finds
  // was counted earlier. Writer only after the ring is published.
  uint64_t counts_since_ns() const noexcept { return counts_since_ns_; }
  void set_counts_since_ns(uint64_t ns) noexcept { counts_since_ns_ = ns; }

  uint32_t tid() const noexcept { return tid_; }
  pthread_t thread() const noexcept { return thread_; }
  uint64_t capacity_bytes() const noexcept { return capacity_bytes_; }

 private:
  void* reserve_slow(uint64_t stride) noexcept;
  void* try_reserve(uint64_t stride) noexcept;
  void* count_drop() noexcept;

  // Producer-owned line.
  uint8_t* data_ = nullptr;
  uint64_t capacity_bytes_ = 0;
  uint64_t reserved_head_ = 0;
  uint64_t cached_tail_ = 0;
  // Written by the producer only (relaxed stores, no read-modify-write); the
  // writer reads them once the producer is gone.
  std::atomic<uint64_t> lost_count_{0};
  std::atomic<uint64_t> lost_first_ns_{0};
  std::atomic<uint64_t> lost_last_ns_{0};
  std::atomic<uint64_t> head_{0};
  std::atomic<bool> calls_counted_{false};  // a counter moved since the last take
  // Consumer-owned line: keeps the producer's stores off the writer's cache line.
  alignas(64) std::atomic<uint64_t> tail_{0};
  uint32_t tid_ = 0;
  pthread_t thread_{};
  alignas(64) std::atomic<uint32_t> call_counts_[kCountedApiSlots] = {};  // producer
  uint32_t taken_counts_[kCountedApiSlots] = {};                          // consumer
  uint64_t counts_since_ns_ = 0;                                          // consumer
};

}  // namespace proflaunch
