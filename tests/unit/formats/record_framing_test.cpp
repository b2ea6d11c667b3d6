// Forward compatibility and malformed records inside a chunk that decodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "formats/chunk_encoder.h"
#include "formats/trace_builder.h"
#include "tests/unit/formats/collecting_visitor.h"

namespace proflaunch::format {
namespace {

using testing::CollectingVisitor;
using testing::open_bytes;

// A record whose header claims `bytes`; never shorter than the header itself.
std::vector<uint8_t> record_bytes(uint16_t kind, uint16_t bytes, uint8_t fill = 0) {
  std::vector<uint8_t> record(std::max<size_t>(bytes, sizeof(RecordHeader)), fill);
  const RecordHeader header{kind, bytes};
  std::memcpy(record.data(), &header, sizeof header);
  return record;
}

ApiCallRecord api_call(uint64_t correlation_id) {
  ApiCallRecord record{};
  record.header = header_for<ApiCallRecord>();
  record.span.correlation_id = correlation_id;
  return record;
}

std::span<const uint8_t> bytes_of(const ApiCallRecord& record) {
  return {reinterpret_cast<const uint8_t*>(&record), sizeof record};
}

TEST(RecordFraming, UnknownKindsAreSkippedBySize) {
  TraceBuilder trace;
  const auto first = api_call(1), second = api_call(2);
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(first));
  trace.raw_record(1, ChunkKind::kEvents, record_bytes(200, 37, 0xAB));  // future kind, odd size
  trace.raw_record(1, ChunkKind::kEvents, record_bytes(255, 4));          // header only
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(second));
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_EQ(report.records_unknown_kind, 2u);
  EXPECT_EQ(report.records_malformed, 0u);
  ASSERT_EQ(visitor.records.size(), 2u);
  EXPECT_EQ(visitor.records[0].as<ApiCallRecord>().span.correlation_id, 1u);
  EXPECT_EQ(visitor.records[1].as<ApiCallRecord>().span.correlation_id, 2u);
}

TEST(RecordFraming, LongerRecordsFromALaterVersionAreAccepted) {
  ApiCallRecord record = api_call(77);
  std::vector<uint8_t> longer(sizeof record + 12, 0xCD);
  record.header.bytes = static_cast<uint16_t>(longer.size());
  std::memcpy(longer.data(), &record, sizeof record);
  TraceBuilder trace;
  trace.raw_record(1, ChunkKind::kEvents, longer);
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(api_call(78)));
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  EXPECT_TRUE(reader->read(visitor).clean());
  ASSERT_EQ(visitor.records.size(), 2u);
  EXPECT_EQ(visitor.records[0].bytes.size(), longer.size());
  EXPECT_EQ(visitor.records[0].as<ApiCallRecord>().span.correlation_id, 77u);
  EXPECT_EQ(visitor.records[1].as<ApiCallRecord>().span.correlation_id, 78u);
}

TEST(RecordFraming, ShorterRecordsAreMalformedAndSkipped) {
  TraceBuilder trace;
  trace.raw_record(1, ChunkKind::kEvents,
                   record_bytes(static_cast<uint16_t>(RecordKind::kKernelLaunch), 20));
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(api_call(5)));
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_EQ(report.records_malformed, 1u);
  ASSERT_EQ(visitor.records.size(), 1u);
  EXPECT_EQ(visitor.records[0].as<ApiCallRecord>().span.correlation_id, 5u);
}

TEST(RecordFraming, BrokenSizePrefixDropsTheRestOfTheChunkOnly) {
  TraceBuilder trace;
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(api_call(1)));
  trace.raw_record(1, ChunkKind::kEvents, record_bytes(34, 2));  // bytes < header
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(api_call(2)));  // lost with it
  trace.flush();
  trace.raw_record(1, ChunkKind::kEvents, bytes_of(api_call(3)));  // next chunk: fine
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_EQ(report.records_malformed, 1u);
  EXPECT_EQ(report.chunks_ok, 2u);
  ASSERT_EQ(visitor.records.size(), 2u);
  EXPECT_EQ(visitor.records[0].as<ApiCallRecord>().span.correlation_id, 1u);
  EXPECT_EQ(visitor.records[1].as<ApiCallRecord>().span.correlation_id, 3u);
}

TEST(RecordFraming, RecordRunningPastTheChunkEndIsMalformed) {
  std::vector<uint8_t> content = record_bytes(34, 40);
  content.resize(30);  // declared 40 bytes, chunk ends after 30
  std::vector<uint8_t> chunk(max_encoded_chunk_bytes(content.size()));
  ChunkEncoder encoder;
  chunk.resize(encoder.encode(ChunkKind::kEvents, 1, content.data(), content.size(), chunk.data(),
                              chunk.size()));
  TraceBuilder trace;
  trace.append_bytes(chunk);
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_EQ(report.records_malformed, 1u);
  EXPECT_TRUE(visitor.records.empty());
}

std::vector<uint8_t> encode_chunk(uint16_t kind, const std::vector<uint8_t>& content) {
  std::vector<uint8_t> chunk(max_encoded_chunk_bytes(content.size()));
  ChunkEncoder encoder;
  chunk.resize(encoder.encode(static_cast<ChunkKind>(kind), 1, content.data(), content.size(),
                              chunk.data(), chunk.size()));
  return chunk;
}

TEST(RecordFraming, UnknownChunkKindsAreSteppedOver) {
  const auto record = api_call(9);
  const auto span = bytes_of(record);
  TraceBuilder trace;
  trace.append_bytes(encode_chunk(77, std::vector<uint8_t>(span.begin(), span.end())));
  trace.raw_record(1, ChunkKind::kEvents, span);
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_EQ(report.chunks_unknown_kind, 1u);
  EXPECT_EQ(report.chunks_ok, 1u);
  EXPECT_EQ(report.chunks_corrupt, 0u);
  EXPECT_EQ(visitor.records.size(), 1u);
}

TEST(RecordFraming, DefinitionsPassDoesNotDecompressEvents) {
  // An Events chunk whose header verifies but whose payload is not zstd: the
  // definitions pass steps over it by size and so never notices.
  TraceBuilder trace;
  trace.process(1, ProcessSpec{.pid = 3});
  trace.flush();
  std::vector<uint8_t> junk(64, 0x11);
  const ChunkHeader header = make_chunk_header(ChunkKind::kEvents, 1, junk.size());
  const auto* h = reinterpret_cast<const uint8_t*>(&header);
  trace.append_bytes(std::span<const uint8_t>(h, sizeof header));
  trace.append_bytes(junk);
  trace.process(2, ProcessSpec{.pid = 4});
  std::string error;
  auto reader = open_bytes(trace.bytes(), &error);
  ASSERT_TRUE(reader) << error;

  CollectingVisitor definitions;
  const ReadReport first = reader->read(definitions, ChunkSelection::kDefinitionsOnly);
  EXPECT_EQ(first.chunks_ok, 2u);
  EXPECT_EQ(first.chunks_not_decoded, 1u);
  EXPECT_EQ(first.chunks_corrupt, 0u);

  CollectingVisitor events;
  const ReadReport second = reader->read(events, ChunkSelection::kEventsOnly);
  EXPECT_EQ(second.chunks_ok, 0u);
  EXPECT_EQ(second.chunks_corrupt_payload, 1u);
  EXPECT_EQ(second.chunks_not_decoded, 2u);
  EXPECT_TRUE(events.records.empty());

  const ReadReport both = combine_passes(first, second);
  EXPECT_EQ(both.chunks_ok, 2u);
  EXPECT_EQ(both.chunks_corrupt, 1u);
  EXPECT_EQ(both.bytes_skipped, sizeof header + junk.size());
}

}  // namespace
}  // namespace proflaunch::format
