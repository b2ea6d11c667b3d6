#include "tools/proftrace/json_writer.h"

#include <charconv>
#include <cmath>

namespace proflaunch::tools {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence starting at text[i], or 0 if invalid
// (overlong forms, surrogates and code points above U+10FFFF included).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  size_t length;
  uint32_t code_point;
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code_point = code_point << 6 | (byte(i + k) & 0x3F);
  }
  if (length == 3 && (code_point < 0x800 || (code_point >= 0xD800 && code_point <= 0xDFFF))) return 0;
  if (length == 4 && (code_point < 0x10000 || code_point > 0x10FFFF)) return 0;
  return length;
}

template <typename Sink>
void escape_into(std::string_view text, Sink&& sink) {
  size_t run_start = 0;
  size_t i = 0;
  auto flush_run = [&](size_t end) {
    if (end > run_start) sink(text.substr(run_start, end - run_start));
  };
  while (i < text.size()) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      const size_t length = utf8_sequence_length(text, i);
      if (length > 0) {
        i += length;
        continue;
      }
      flush_run(i);
      sink("\xEF\xBF\xBD");  // U+FFFD
      run_start = ++i;
      continue;
    }
    flush_run(i);
    switch (c) {
      case '"': sink("\\\""); break;
      case '\\': sink("\\\\"); break;
      case '\n': sink("\\n"); break;
      case '\t': sink("\\t"); break;
      case '\r': sink("\\r"); break;
      default: {
        const char escaped[6] = {'\\', 'u', '0', '0', kHexDigits[c >> 4], kHexDigits[c & 0xF]};
        sink(std::string_view(escaped, 6));
      }
    }
    run_start = ++i;
  }
  flush_run(i);
}

size_t format_microseconds(int64_t ns, char* out) {
  char* p = out;
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    *p++ = '-';
    magnitude = 0 - magnitude;
  }
  p = std::to_chars(p, p + 24, magnitude / 1000).ptr;
  const unsigned fraction = static_cast<unsigned>(magnitude % 1000);
  *p++ = '.';
  *p++ = static_cast<char>('0' + fraction / 100);
  *p++ = static_cast<char>('0' + fraction / 10 % 10);
  *p++ = static_cast<char>('0' + fraction % 10);
  return static_cast<size_t>(p - out);
}

}  // namespace

std::string json_quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  escape_into(text, [&](std::string_view piece) { out.append(piece); });
  out.push_back('"');
  return out;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string utf8_repaired(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = static_cast<uint8_t>(text[i]) < 0x80 ? 1 : utf8_sequence_length(text, i);
    if (length == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::string json_microseconds(int64_t ns) {
  char text[32];
  return std::string(text, format_microseconds(ns, text));
}

JsonWriter::JsonWriter(std::FILE* out) : out_(out), buffer_(new char[kCapacity]) {}

void JsonWriter::quoted(std::string_view text) {
  put('"');
  escape_into(text, [&](std::string_view piece) { raw(piece); });
  put('"');
}

void JsonWriter::fixed3(double value) {
  if (!std::isfinite(value)) value = 0;
  if (size_ + 64 > kCapacity) spill(64);
  const auto result = std::to_chars(buffer_.get() + size_, buffer_.get() + size_ + 64, value,
                                    std::chars_format::fixed, 3);
  if (result.ec != std::errc()) return raw("0");
  size_ = static_cast<size_t>(result.ptr - buffer_.get());
}

void JsonWriter::microseconds(int64_t ns) {
  if (size_ + 32 > kCapacity) spill(32);
  size_ += format_microseconds(ns, buffer_.get() + size_);
}

void JsonWriter::spill(size_t) { flush(); }

void JsonWriter::write_through(std::string_view text) {
  if (failed_) return;
  if (std::fwrite(text.data(), 1, text.size(), out_) != text.size()) failed_ = true;
  flushed_bytes_ += text.size();
}

bool JsonWriter::flush() {
  if (size_ > 0 && !failed_) {
    if (std::fwrite(buffer_.get(), 1, size_, out_) != size_) failed_ = true;
  }
  flushed_bytes_ += size_;
  size_ = 0;
  if (!failed_ && std::fflush(out_) != 0) failed_ = true;
  return !failed_;
}

}  // namespace proflaunch::tools
