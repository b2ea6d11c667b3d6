// The writer's staging: ThreadBatch records mark thread changes (and open
// every chunk), counts separate events from LOST, capacity is respected.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "formats/records.h"
#include "preload/writer/chunk_builder.h"

namespace proflaunch {
namespace {

using namespace format;

ApiCallRecord call(uint64_t value) {
  ApiCallRecord record{};
  record.header = header_for<ApiCallRecord>();
  record.span.correlation_id = value;
  return record;
}

std::vector<uint16_t> kinds_in(const EventChunkBuilder& builder) {
  std::vector<uint16_t> kinds;
  size_t offset = 0;
  while (offset < builder.content_bytes()) {
    RecordHeader header;
    std::memcpy(&header, builder.content() + offset, sizeof header);
    kinds.push_back(header.kind);
    offset += header.bytes;
  }
  return kinds;
}

constexpr uint16_t kBatch = static_cast<uint16_t>(RecordKind::kThreadBatch);
constexpr uint16_t kCall = static_cast<uint16_t>(RecordKind::kApiCall);
constexpr uint16_t kLostKind = static_cast<uint16_t>(RecordKind::kLost);

TEST(EventChunkBuilder, StartsABatchAtEveryThreadChange) {
  EventChunkBuilder builder;
  ASSERT_TRUE(builder.init(4096));
  const auto a = call(1), b = call(2), c = call(3);
  ASSERT_TRUE(builder.append(10, &a, sizeof a, 5));
  ASSERT_TRUE(builder.append(10, &b, sizeof b, 6));
  ASSERT_TRUE(builder.append(11, &c, sizeof c, 7));
  EXPECT_EQ(kinds_in(builder), (std::vector<uint16_t>{kBatch, kCall, kCall, kBatch, kCall}));
  EXPECT_EQ(builder.event_records(), 3u);
  EXPECT_EQ(builder.first_append_ns(), 5u);

  builder.clear();
  ASSERT_TRUE(builder.append(11, &c, sizeof c, 9));  // same thread, new chunk: batch again
  EXPECT_EQ(kinds_in(builder), (std::vector<uint16_t>{kBatch, kCall}));
}

TEST(EventChunkBuilder, CountsLostRecordsByTheirCount) {
  EventChunkBuilder builder;
  ASSERT_TRUE(builder.init(4096));
  LostRecord lost{};
  lost.header = header_for<LostRecord>();
  lost.count = 17;
  const auto a = call(1);
  ASSERT_TRUE(builder.append(1, &a, sizeof a, 0));
  ASSERT_TRUE(builder.append(1, &lost, sizeof lost, 0));
  EXPECT_EQ(kinds_in(builder), (std::vector<uint16_t>{kBatch, kCall, kLostKind}));
  EXPECT_EQ(builder.event_records(), 1u);
  EXPECT_EQ(builder.lost_records(), 17u);
}

TEST(EventChunkBuilder, RefusesWhatDoesNotFit) {
  EventChunkBuilder builder;
  ASSERT_TRUE(builder.init(sizeof(ThreadBatchRecord) + 2 * sizeof(ApiCallRecord)));
  const auto a = call(1);
  EXPECT_TRUE(builder.append(1, &a, sizeof a, 0));
  EXPECT_TRUE(builder.append(1, &a, sizeof a, 0));
  EXPECT_FALSE(builder.append(1, &a, sizeof a, 0));
  EXPECT_EQ(builder.event_records(), 2u);
}

TEST(WholeRecordsPrefix, SplitsOnlyAtRecordBoundaries) {
  std::vector<uint8_t> content;
  for (int i = 0; i < 3; ++i) {
    const auto record = call(i);
    const auto* bytes = reinterpret_cast<const uint8_t*>(&record);
    content.insert(content.end(), bytes, bytes + sizeof record);
  }
  constexpr size_t r = sizeof(ApiCallRecord);
  EXPECT_EQ(whole_records_prefix(content.data(), content.size(), 2 * r + 20), 2 * r);
  EXPECT_EQ(whole_records_prefix(content.data(), content.size(), 1000), 3 * r);
  EXPECT_EQ(whole_records_prefix(content.data(), content.size(), 10), r);  // at least one
  EXPECT_EQ(whole_records_prefix(content.data(), r + 10, 1000), r);        // cut record left out
}

}  // namespace
}  // namespace proflaunch
