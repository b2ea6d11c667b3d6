// What the reader accepts as a trace file, and what it says when it refuses.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "formats/chunk_encoder.h"
#include "formats/trace_builder.h"
#include "tests/unit/formats/collecting_visitor.h"

namespace proflaunch::format {
namespace {

using testing::CollectingVisitor;
using testing::open_bytes;

std::vector<uint8_t> valid_trace() {
  TraceBuilder trace;
  trace.process(1, ProcessSpec{.pid = 5});
  return trace.bytes();
}

void patch_header(std::vector<uint8_t>& file, const FileHeader& header) {
  std::memcpy(file.data(), &header, sizeof header);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FileHeader, NewerFormatVersionIsRejectedNamingBothVersions) {
  std::vector<uint8_t> file = valid_trace();
  FileHeader header = make_file_header();
  header.format_version = kFormatVersion + 1;
  patch_header(file, header);
  std::string error;
  EXPECT_FALSE(open_bytes(file, &error));
  EXPECT_TRUE(contains(error, "test.trace")) << error;
  EXPECT_TRUE(contains(error, "version " + std::to_string(kFormatVersion + 1))) << error;
  EXPECT_TRUE(contains(error, "version " + std::to_string(kFormatVersion))) << error;
  EXPECT_TRUE(contains(error, "newer proftrace")) << error;
}

TEST(FileHeader, UnknownRequiredFeatureIsRejected) {
  std::vector<uint8_t> file = valid_trace();
  FileHeader header = make_file_header();
  header.required_features = 1ull << 40;
  patch_header(file, header);
  std::string error;
  EXPECT_FALSE(open_bytes(file, &error));
  EXPECT_TRUE(contains(error, "0x10000000000")) << error;
  EXPECT_TRUE(contains(error, "format version")) << error;
}

TEST(FileHeader, UnknownOptionalFeaturesAreAccepted) {
  std::vector<uint8_t> file = valid_trace();
  FileHeader header = make_file_header();
  header.optional_features = ~0ull;
  patch_header(file, header);
  std::string error;
  auto reader = open_bytes(file, &error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->header().optional_features, ~0ull);
}

TEST(FileHeader, LongerHeaderFromALaterWriterIsSkipped) {
  // A later minor revision may append header fields: header_bytes says so.
  std::vector<uint8_t> file = valid_trace();
  FileHeader header = make_file_header();
  header.header_bytes = sizeof(FileHeader) + 16;
  patch_header(file, header);
  file.insert(file.begin() + sizeof(FileHeader), 16, 0xEE);
  std::string error;
  auto reader = open_bytes(file, &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  const ReadReport report = reader->read(visitor);
  EXPECT_TRUE(report.clean()) << summarize(report);
  EXPECT_EQ(report.chunks_ok, 1u);
}

TEST(FileHeader, GarbageIsRejectedAsNotATrace) {
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 7 + 3);
  std::string error;
  EXPECT_FALSE(open_bytes(garbage, &error));
  EXPECT_TRUE(contains(error, "not a proflaunch trace")) << error;
}

TEST(FileHeader, JsonInputGetsAHint) {
  const std::string json = R"({"traceEvents": []})";
  std::vector<uint8_t> bytes(json.begin(), json.end());
  std::string error;
  EXPECT_FALSE(open_bytes(bytes, &error));
  EXPECT_TRUE(contains(error, "JSON")) << error;
}

TEST(FileHeader, EmptyAndShortFilesAreRejected) {
  std::string error;
  EXPECT_FALSE(open_bytes({}, &error));
  EXPECT_TRUE(contains(error, "empty")) << error;
  std::vector<uint8_t> magic_only(kFileMagic, kFileMagic + 8);
  EXPECT_FALSE(open_bytes(magic_only, &error));
  EXPECT_TRUE(contains(error, "truncated")) << error;
}

TEST(FileHeader, MissingFileAndDirectoryGiveClearMessages) {
  std::string error;
  EXPECT_FALSE(TraceReader::open_file("/nonexistent/run.trace", &error));
  EXPECT_TRUE(contains(error, "/nonexistent/run.trace")) << error;
  EXPECT_TRUE(contains(error, "No such file")) << error;
  EXPECT_FALSE(TraceReader::open_file("/tmp", &error));
  EXPECT_TRUE(contains(error, "directory")) << error;
}

TEST(FileHeader, ReadsARealFile) {
  TraceBuilder trace;
  trace.process(1, ProcessSpec{.pid = 77});
  const auto path = std::filesystem::temp_directory_path() / "proflaunch_file_header_test.trace";
  std::string error;
  ASSERT_TRUE(trace.write_file(path, &error)) << error;
  auto reader = TraceReader::open_file(path, &error);
  ASSERT_TRUE(reader) << error;
  CollectingVisitor visitor;
  EXPECT_TRUE(reader->read(visitor).clean());
  ASSERT_FALSE(visitor.records.empty());
  EXPECT_EQ(visitor.records.front().as<ProcessInfoRecord>().pid, 77u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace proflaunch::format
