// A small, fast JSON text writer: a 1 MiB buffer in front of a FILE*, and
// no document model - the caller writes punctuation itself. Used for trace
// event output that reaches hundreds of MB, where a DOM would cost memory
// proportional to the trace.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace proflaunch::tools {

// `text` as a JSON string literal, quotes included. Control characters are
// escaped; bytes that are not valid UTF-8 become U+FFFD, since command lines
// and symbol names are not guaranteed to be UTF-8 and a JSON parser rejects
// the whole file for one bad byte.
std::string json_quoted(std::string_view text);

// Whether `text` is valid UTF-8, and `text` with every byte that is not
// part of a valid sequence replaced by U+FFFD (the rule json_quoted applies;
// the protobuf output applies it too, so both carry the same text).
bool is_valid_utf8(std::string_view text);
std::string utf8_repaired(std::string_view text);

// Integer nanoseconds as JSON microseconds with exactly three decimals
// ("1234.567"), so that no precision is lost to floating point in the file.
std::string json_microseconds(int64_t ns);

class JsonWriter {
 public:
  explicit JsonWriter(std::FILE* out);
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  void raw(std::string_view text) {
    if (size_ + text.size() > kCapacity) spill(text.size());
    if (text.size() > kCapacity) return write_through(text);
    text.copy(buffer_.get() + size_, text.size());
    size_ += text.size();
  }
  void put(char c) {
    if (size_ + 1 > kCapacity) spill(1);
    buffer_[size_++] = c;
  }
  void quoted(std::string_view text);
  void number(uint64_t value) { integer(value); }
  void number(int64_t value) { integer(value); }
  void number(uint32_t value) { number(static_cast<uint64_t>(value)); }
  void number(int32_t value) { number(static_cast<int64_t>(value)); }
  void fixed3(double value);  // "12.345"; non-finite values as 0
  void microseconds(int64_t ns);

  // Writes out the buffer. False once any write failed.
  bool flush();
  bool failed() const { return failed_; }
  uint64_t bytes_written() const { return flushed_bytes_ + size_; }

 private:
  static constexpr size_t kCapacity = 1 << 20;
  template <typename Integer>
  void integer(Integer value) {
    if (size_ + 24 > kCapacity) spill(24);
    size_ = static_cast<size_t>(std::to_chars(buffer_.get() + size_, buffer_.get() + kCapacity, value).ptr -
                                buffer_.get());
  }
  void spill(size_t needed);
  void write_through(std::string_view text);

  std::FILE* out_;
  std::unique_ptr<char[]> buffer_;
  size_t size_ = 0;
  uint64_t flushed_bytes_ = 0;
  bool failed_ = false;
};

}  // namespace proflaunch::tools
