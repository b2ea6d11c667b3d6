// Delta coding of records inside a chunk: exact round trips for every shape
// of record, zeros where a record repeats its predecessor, independent chunks.
#include "formats/record_delta.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "formats/records.h"

namespace proflaunch::format {
namespace {

std::vector<uint8_t> make_record(uint16_t kind, uint16_t bytes, std::mt19937& random) {
  std::vector<uint8_t> record(bytes);
  for (auto& b : record) b = static_cast<uint8_t>(random());
  const RecordHeader header{kind, bytes};
  std::memcpy(record.data(), &header, sizeof header);
  return record;
}

// Encodes the records back to back, as the writer stages them.
std::vector<uint8_t> encode_chunk(const std::vector<std::vector<uint8_t>>& records) {
  RecordDeltaCoder coder;
  coder.reset();
  std::vector<uint8_t> content;
  for (const auto& record : records) {
    const size_t at = content.size();
    content.insert(content.end(), record.begin(), record.end());
    coder.encode(content.data() + at, static_cast<uint16_t>(record.size()));
  }
  return content;
}

TEST(RecordDelta, EveryShapeOfRecordRoundTrips) {
  std::mt19937 random(7);
  std::vector<std::vector<uint8_t>> records;
  // Repeated fixed kinds, a kind whose size varies, sizes at and past the
  // delta limit, tails of 1..7 bytes, a kind of 256 and above.
  const uint16_t sizes[] = {8, 12, 40, 44, 96, 127, 128, 129, 300};
  for (int i = 0; i < 2000; ++i) {
    const uint16_t kind = static_cast<uint16_t>(i % 7 == 0 ? 300 + i % 3 : 32 + i % 9);
    const uint16_t bytes = sizes[(i * 7 + kind) % std::size(sizes)];
    records.push_back(make_record(kind, bytes, random));
  }
  std::vector<uint8_t> content = encode_chunk(records);
  std::vector<uint8_t> original;
  for (const auto& record : records) original.insert(original.end(), record.begin(), record.end());
  ASSERT_NE(content, original) << "nothing was delta-coded";
  ASSERT_TRUE(undo_record_delta(content.data(), content.size()));
  EXPECT_EQ(content, original);
}

TEST(RecordDelta, ARepeatedRecordBecomesItsHeaderAndZeros) {
  KernelLaunchRecord launch{};
  launch.header = header_for<KernelLaunchRecord>();
  launch.span.begin_ns = 1000;
  launch.span.end_ns = 1500;
  launch.function = 0xdeadbeef;
  launch.grid = {128, 1, 1};
  std::vector<uint8_t> bytes(sizeof launch);
  std::memcpy(bytes.data(), &launch, sizeof launch);
  KernelLaunchRecord next = launch;
  next.span.begin_ns += 20;
  next.span.end_ns += 20;
  std::vector<uint8_t> next_bytes(sizeof next);
  std::memcpy(next_bytes.data(), &next, sizeof next);

  const std::vector<uint8_t> content = encode_chunk({bytes, next_bytes});
  KernelLaunchRecord coded;
  std::memcpy(&coded, content.data() + sizeof launch, sizeof coded);
  EXPECT_EQ(coded.header.kind, launch.header.kind);
  EXPECT_EQ(coded.header.bytes, launch.header.bytes);
  EXPECT_EQ(coded.span.begin_ns, 20u);
  EXPECT_EQ(coded.span.end_ns, 20u);
  EXPECT_EQ(coded.function, 0u);
  EXPECT_EQ(coded.grid.x, 0u);
}

TEST(RecordDelta, AResetStartsFromRawRecords) {
  std::mt19937 random(3);
  const auto record = make_record(40, 48, random);
  RecordDeltaCoder coder;
  std::vector<uint8_t> first = record, second = record;
  coder.reset();
  coder.encode(first.data(), 48);
  coder.reset();  // a new chunk
  coder.encode(second.data(), 48);
  EXPECT_EQ(first, record);
  EXPECT_EQ(second, record);
}

TEST(RecordDelta, ContentThatDoesNotWalkIsRejected) {
  std::vector<uint8_t> content(16, 0);
  const RecordHeader too_long{40, 200};
  std::memcpy(content.data(), &too_long, sizeof too_long);
  EXPECT_FALSE(undo_record_delta(content.data(), content.size()));
  const RecordHeader too_short{40, 2};
  std::memcpy(content.data(), &too_short, sizeof too_short);
  EXPECT_FALSE(undo_record_delta(content.data(), content.size()));
}

}  // namespace
}  // namespace proflaunch::format
