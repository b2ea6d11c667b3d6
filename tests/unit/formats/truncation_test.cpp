// A file cut at any byte: the reader never fails unexpectedly and recovers
// exactly the chunks that ended before the cut.
#include <gtest/gtest.h>

#include "formats/trace_builder.h"
#include "tests/unit/formats/collecting_visitor.h"

namespace proflaunch::format {
namespace {

using testing::CollectingVisitor;
using testing::open_bytes;

// Six or more small chunks across two sections and both chunk kinds.
TraceBuilder small_multi_chunk_trace() {
  TraceBuilder trace(TraceBuilder::Options{.chunk_content_bytes = 200});
  trace.process(1, ProcessSpec{.pid = 11, .argv = {"a"}});
  trace.process(2, ProcessSpec{.pid = 22, .argv = {"b"}});
  for (uint64_t i = 0; i < 12; ++i) {
    KernelLaunchRecord launch{};
    launch.span.correlation_id = i;
    trace.event(1 + i % 2, 5, launch);
  }
  trace.section_end(1, 100, 7, 0);
  trace.flush();
  return trace;
}

TEST(Truncation, EveryCutRecoversExactlyTheCompleteChunks) {
  TraceBuilder trace = small_multi_chunk_trace();
  const std::vector<uint8_t> full = trace.bytes();
  const auto& chunks = trace.chunks();
  ASSERT_GE(chunks.size(), 6u);

  for (size_t cut = 0; cut <= full.size(); ++cut) {
    SCOPED_TRACE("cut at " + std::to_string(cut) + " of " + std::to_string(full.size()));
    const std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(cut));
    std::string error;
    auto reader = open_bytes(prefix, &error);
    if (cut < sizeof(FileHeader)) {
      ASSERT_FALSE(reader);
      EXPECT_TRUE(error.find("truncated") != std::string::npos ||
                  error.find("empty") != std::string::npos)
          << error;
      continue;
    }
    ASSERT_TRUE(reader) << error;

    size_t complete_chunks = 0, complete_records = 0;
    uint64_t last_chunk_end = sizeof(FileHeader);
    for (const auto& chunk : chunks) {
      if (chunk.offset + chunk.bytes > cut) break;
      ++complete_chunks;
      complete_records += chunk.records;
      last_chunk_end = chunk.offset + chunk.bytes;
    }

    CollectingVisitor visitor;
    const ReadReport report = reader->read(visitor);
    EXPECT_EQ(report.chunks_ok, complete_chunks);
    EXPECT_EQ(report.chunks_corrupt, 0u);
    EXPECT_EQ(visitor.records.size(), complete_records);
    EXPECT_EQ(report.truncated_tail, cut != last_chunk_end);
    EXPECT_EQ(report.bytes_skipped, cut - last_chunk_end);
    // The records delivered are the leading ones, in file order.
    for (size_t i = 0; i < visitor.chunks.size(); ++i)
      EXPECT_EQ(visitor.chunks[i].file_offset, chunks[i].offset);
  }
}

TEST(Truncation, DefinitionsPassSeesTheSameCut) {
  TraceBuilder trace = small_multi_chunk_trace();
  const std::vector<uint8_t> full = trace.bytes();
  const auto& last = trace.chunks().back();
  const std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(last.offset + 30));
  std::string error;
  auto reader = open_bytes(prefix, &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor, ChunkSelection::kDefinitionsOnly);
  EXPECT_TRUE(report.truncated_tail);
  EXPECT_EQ(report.truncated_tail_offset, last.offset);
  for (const auto& record : visitor.records) EXPECT_EQ(record.chunk_kind, ChunkKind::kDefinitions);
}

}  // namespace
}  // namespace proflaunch::format
