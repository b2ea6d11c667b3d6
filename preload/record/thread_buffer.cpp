#include "preload/record/thread_buffer.h"

#include "preload/base/clock.h"

namespace proflaunch {

void ThreadBuffer::init(uint8_t* data, uint64_t capacity_bytes, uint32_t tid,
                        pthread_t thread) noexcept {
  data_ = data;
  capacity_bytes_ = capacity_bytes;
  reserved_head_ = 0;
  cached_tail_ = 0;
  lost_count_.store(0, std::memory_order_relaxed);
  lost_first_ns_.store(0, std::memory_order_relaxed);
  lost_last_ns_.store(0, std::memory_order_relaxed);
  head_.store(0, std::memory_order_relaxed);
  tail_.store(0, std::memory_order_relaxed);
  tid_ = tid;
  thread_ = thread;
}

void* ThreadBuffer::try_reserve(uint64_t stride) noexcept {
  uint64_t head = head_.load(std::memory_order_relaxed);
  uint64_t offset = head & (capacity_bytes_ - 1);
  const uint64_t to_end = capacity_bytes_ - offset;
  const uint64_t needed = stride + (to_end < stride ? to_end : 0);
  if (head + needed - cached_tail_ > capacity_bytes_) {
    cached_tail_ = tail_.load(std::memory_order_acquire);
    if (head + needed - cached_tail_ > capacity_bytes_) return nullptr;
  }
  if (to_end < stride) {
    // The pad becomes visible with the record's commit, never on its own.
    format::RecordHeader pad{kPadKind, 0};
    std::memcpy(data_ + offset, &pad, sizeof pad);
    head += to_end;
    offset = 0;
  }
  reserved_head_ = head + stride;
  return data_ + offset;
}

void* ThreadBuffer::count_drop() noexcept {
  // Ticks, like the spans around the gap: the writer converts both alike.
  const uint64_t now = now_ticks();
  const uint64_t count = lost_count_.load(std::memory_order_relaxed);
  if (count == 0) lost_first_ns_.store(now, std::memory_order_relaxed);
  lost_last_ns_.store(now, std::memory_order_relaxed);
  lost_count_.store(count + 1, std::memory_order_relaxed);
  return nullptr;
}

void* ThreadBuffer::reserve_slow(uint64_t stride) noexcept {
  if (stride > kMaxEventRecordBytes) return count_drop();
  const uint64_t lost = lost_count_.load(std::memory_order_relaxed);
  if (lost != 0) {
    // Report the gap before the next record, so readers see it in order.
    // Only when the record after it fits too: a LOST with nothing behind it
    // would just fill the ring again.
    const uint64_t lost_stride = slot_stride(sizeof(format::LostRecord));
    void* slot = try_reserve(lost_stride + stride);
    if (slot == nullptr) return count_drop();
    slot = try_reserve(lost_stride);
    format::LostRecord record{};
    record.header = format::header_for<format::LostRecord>();
    record.reason = static_cast<uint32_t>(format::LostReason::kBufferFull);
    record.first_ns = lost_first_ns_.load(std::memory_order_relaxed);
    record.last_ns = lost_last_ns_.load(std::memory_order_relaxed);
    record.count = lost;
    std::memcpy(slot, &record, sizeof record);
    commit();
    lost_count_.store(0, std::memory_order_relaxed);
  }
  void* slot = try_reserve(stride);
  return slot != nullptr ? slot : count_drop();
}

ThreadBuffer::PendingLoss ThreadBuffer::take_pending_loss() noexcept {
  PendingLoss loss{lost_count_.load(std::memory_order_relaxed),
                   lost_first_ns_.load(std::memory_order_relaxed),
                   lost_last_ns_.load(std::memory_order_relaxed)};
  lost_count_.store(0, std::memory_order_relaxed);
  return loss;
}

}  // namespace proflaunch
