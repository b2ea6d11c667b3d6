// The per-thread ring on its own: in-place records, wrap-around, drops and
// their in-band LOST record, and one producer against one consumer.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "formats/records.h"
#include "preload/record/thread_buffer.h"

namespace proflaunch {
namespace {

using format::ApiCallRecord;
using format::LostRecord;
using format::RecordKind;

struct Ring {
  explicit Ring(uint64_t capacity) : memory(capacity) {
    buffer.init(memory.data(), capacity, 42, pthread_self());
  }
  std::vector<uint8_t> memory;
  ThreadBuffer buffer;
};

bool emit_call(ThreadBuffer& ring, uint64_t value) {
  auto* slot = static_cast<ApiCallRecord*>(ring.reserve(sizeof(ApiCallRecord)));
  if (slot == nullptr) return false;
  ApiCallRecord record{};
  record.header = format::header_for<ApiCallRecord>();
  record.span.correlation_id = value;
  std::memcpy(slot, &record, sizeof record);
  ring.commit();
  return true;
}

struct Drained {
  std::vector<uint64_t> values;
  std::vector<LostRecord> lost;
  std::vector<size_t> lost_positions;  // index into values where each LOST sat
};

void drain_into(ThreadBuffer& ring, Drained& out) {
  ring.drain([&](const void* data, uint16_t bytes) {
    format::RecordHeader header;
    std::memcpy(&header, data, sizeof header);
    EXPECT_EQ(header.bytes, bytes);
    if (header.kind == static_cast<uint16_t>(RecordKind::kLost)) {
      LostRecord lost;
      std::memcpy(&lost, data, sizeof lost);
      out.lost.push_back(lost);
      out.lost_positions.push_back(out.values.size());
    } else {
      EXPECT_EQ(header.kind, static_cast<uint16_t>(RecordKind::kApiCall));
      ApiCallRecord call;
      std::memcpy(&call, data, sizeof call);
      out.values.push_back(call.span.correlation_id);
    }
    return true;
  });
}

TEST(ThreadBuffer, RecordsComeOutInOrderAfterCommit) {
  Ring ring(4096);
  for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE(emit_call(ring.buffer, i));
  Drained drained;
  drain_into(ring.buffer, drained);
  EXPECT_EQ(drained.values, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_FALSE(ring.buffer.has_records());
}

TEST(ThreadBuffer, AnUncommittedSlotIsInvisibleAndReusedByTheNextReserve) {
  Ring ring(4096);
  ASSERT_NE(ring.buffer.reserve(sizeof(ApiCallRecord)), nullptr);  // abandoned
  EXPECT_FALSE(ring.buffer.has_records());
  ASSERT_TRUE(emit_call(ring.buffer, 7));
  Drained drained;
  drain_into(ring.buffer, drained);
  EXPECT_EQ(drained.values, (std::vector<uint64_t>{7}));
}

TEST(ThreadBuffer, WrapsAroundWithoutSplittingARecord) {
  // 40-byte records in a 1 KiB ring never land exactly on the end: every lap
  // needs a pad, and the consumer must skip it.
  Ring ring(1024);
  Drained drained;
  uint64_t next = 0;
  for (int lap = 0; lap < 50; ++lap) {
    for (int i = 0; i < 17; ++i) ASSERT_TRUE(emit_call(ring.buffer, next++));
    drain_into(ring.buffer, drained);
  }
  ASSERT_EQ(drained.values.size(), next);
  for (uint64_t i = 0; i < next; ++i) ASSERT_EQ(drained.values[i], i);
  EXPECT_TRUE(drained.lost.empty());
}

TEST(ThreadBuffer, AFullRingCountsDropsAndReportsThemBeforeTheNextRecord) {
  Ring ring(1024);
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < 100; ++i) accepted += emit_call(ring.buffer, i) ? 1 : 0;
  ASSERT_LT(accepted, 100u);
  ASSERT_GT(accepted, 0u);
  Drained drained;
  drain_into(ring.buffer, drained);  // frees the ring
  ASSERT_TRUE(emit_call(ring.buffer, 1000));
  drain_into(ring.buffer, drained);

  ASSERT_EQ(drained.lost.size(), 1u);
  EXPECT_EQ(drained.lost[0].count, 100u - accepted);
  EXPECT_EQ(drained.lost[0].reason, static_cast<uint32_t>(format::LostReason::kBufferFull));
  EXPECT_LE(drained.lost[0].first_ns, drained.lost[0].last_ns);
  // The LOST sits between the last record before the gap and the first after.
  EXPECT_EQ(drained.lost_positions[0], accepted);
  EXPECT_EQ(drained.values.back(), 1000u);
  EXPECT_EQ(ring.buffer.take_pending_loss().count, 0u);
}

TEST(ThreadBuffer, DropsLeftAtTheEndAreHandedToTheWriter) {
  Ring ring(1024);
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < 60; ++i) accepted += emit_call(ring.buffer, i) ? 1 : 0;
  const auto loss = ring.buffer.take_pending_loss();
  EXPECT_EQ(loss.count, 60u - accepted);
  EXPECT_GT(loss.count, 0u);
  EXPECT_EQ(ring.buffer.take_pending_loss().count, 0u);  // taken once
}

TEST(ThreadBuffer, ARecordWithABrokenHeaderDiscardsTheRest) {
  Ring ring(4096);
  ASSERT_TRUE(emit_call(ring.buffer, 1));
  auto* slot = static_cast<uint8_t*>(ring.buffer.reserve(sizeof(ApiCallRecord)));
  ASSERT_NE(slot, nullptr);
  format::RecordHeader broken{static_cast<uint16_t>(RecordKind::kApiCall), 2};  // < header size
  std::memcpy(slot, &broken, sizeof broken);
  ring.buffer.commit();
  ASSERT_TRUE(emit_call(ring.buffer, 3));
  std::vector<uint64_t> values;
  const DrainResult result = ring.buffer.drain([&](const void* data, uint16_t) {
    ApiCallRecord call;
    std::memcpy(&call, data, sizeof call);
    values.push_back(call.span.correlation_id);
    return true;
  });
  EXPECT_TRUE(result.corrupt);
  EXPECT_EQ(values, (std::vector<uint64_t>{1}));
  EXPECT_FALSE(ring.buffer.has_records());
}

TEST(ThreadBuffer, OneProducerOneConsumerLoseNothingUnaccounted) {
  constexpr uint64_t kRecords = 2000000;
  Ring ring(64 * 1024);
  std::atomic<bool> done{false};
  Drained drained;
  std::thread consumer([&] {
    while (!done.load(std::memory_order_acquire)) drain_into(ring.buffer, drained);
    drain_into(ring.buffer, drained);
  });
  uint64_t accepted = 0;
  for (uint64_t i = 0; i < kRecords; ++i) accepted += emit_call(ring.buffer, i) ? 1 : 0;
  done.store(true, std::memory_order_release);
  consumer.join();

  uint64_t lost_in_band = 0;
  for (const auto& lost : drained.lost) lost_in_band += lost.count;
  const uint64_t lost_pending = ring.buffer.take_pending_loss().count;
  EXPECT_EQ(drained.values.size(), accepted);
  EXPECT_EQ(accepted + lost_in_band + lost_pending, kRecords);
  for (size_t i = 1; i < drained.values.size(); ++i)
    ASSERT_LT(drained.values[i - 1], drained.values[i]) << "order broken at " << i;
}

}  // namespace
}  // namespace proflaunch
