// The hand-written JSON writer: exact timestamps, escaping, buffering.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/unit/tools/json_value.h"
#include "tools/proftrace/json_writer.h"

namespace proflaunch::tools {
namespace {

TEST(JsonWriter, MicrosecondsKeepEveryNanosecond) {
  EXPECT_EQ(json_microseconds(0), "0.000");
  EXPECT_EQ(json_microseconds(1), "0.001");
  EXPECT_EQ(json_microseconds(999), "0.999");
  EXPECT_EQ(json_microseconds(1000), "1.000");
  EXPECT_EQ(json_microseconds(1234567891), "1234567.891");
  EXPECT_EQ(json_microseconds(-1500), "-1.500");
  // 10 days in ns: beyond what a double in microseconds holds to the ns? No:
  // the text is exact whatever the magnitude.
  EXPECT_EQ(json_microseconds(864'000'000'000'123), "864000000000.123");
}

std::string parse_string_back(const std::string& quoted) {
  std::string error;
  auto value = testing::parse_json(quoted, &error);
  EXPECT_TRUE(value.has_value()) << error << " in " << quoted;
  return value ? value->str() : "";
}

TEST(JsonWriter, QuotedEscapesWhatJsonRequires) {
  const std::string tricky = std::string("a\"b\\c\nd\te\x01" "f\x1f", 12);
  EXPECT_EQ(json_quoted(tricky), "\"a\\\"b\\\\c\\nd\\te\\u0001f\\u001f\"");
  EXPECT_EQ(parse_string_back(json_quoted(tricky)), tricky);
}

TEST(JsonWriter, ValidUtf8PassesThroughInvalidBytesBecomeReplacementCharacters) {
  const std::string valid = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";  // café € 😀
  EXPECT_EQ(json_quoted(valid), "\"" + valid + "\"");
  const std::string invalid = "a\xFF" "b\xC3" "c\xED\xA0\x80" "d";  // stray, cut, surrogate
  const std::string replaced = parse_string_back(json_quoted(invalid));
  EXPECT_EQ(replaced, "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "d");
}

TEST(JsonWriter, WritesLargeOutputThroughItsBuffer) {
  std::FILE* file = std::tmpfile();
  JsonWriter writer(file);
  writer.put('[');
  for (int i = 0; i < 200000; ++i) {
    if (i > 0) writer.put(',');
    writer.raw("{\"ts\":");
    writer.microseconds(i * 1001LL);
    writer.raw(",\"n\":");
    writer.number(static_cast<uint64_t>(i));
    writer.raw(",\"s\":");
    writer.quoted("x\"y");
    writer.raw(",\"f\":");
    writer.fixed3(i / 7.0);
    writer.put('}');
  }
  writer.put(']');
  ASSERT_TRUE(writer.flush());
  std::rewind(file);
  std::string text;
  char buffer[65536];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  std::fclose(file);
  EXPECT_EQ(writer.bytes_written(), text.size());
  std::string error;
  auto value = testing::parse_json(text, &error);
  ASSERT_TRUE(value.has_value()) << error;
  ASSERT_EQ(value->items.size(), 200000u);
  EXPECT_EQ(value->items[123456]["ts"].str(), json_microseconds(123456 * 1001LL));
  EXPECT_EQ(value->items[123456]["n"].as_uint(), 123456u);
  EXPECT_EQ(value->items[7]["f"].str(), "1.000");
}

TEST(JsonWriter, ReportsWriteFailure) {
  std::FILE* full = std::fopen("/dev/full", "w");
  if (full == nullptr) GTEST_SKIP() << "no /dev/full";
  JsonWriter writer(full);
  for (int i = 0; i < 300000; ++i) writer.raw("0123456789");
  EXPECT_FALSE(writer.flush());
  EXPECT_TRUE(writer.failed());
  std::fclose(full);
}

}  // namespace
}  // namespace proflaunch::tools
