#include "preload/stacks/python_frames.h"

#include <atomic>
#include <cstring>

#include "formats/records.h"
#include "preload/stacks/python_frame_walk.h"
#include "preload/stacks/python_interpreter.h"
#include "preload/stacks/python_line_table.h"

namespace proflaunch::stacks {
namespace {

PythonInterpreter g_interpreter;
std::atomic<bool> g_ready{false};

using python_walk::is_object_of_type;
using python_walk::read_at;

constexpr int64_t kMaxStringCodePoints = 1024;
constexpr int64_t kMaxLineTableBytes = int64_t{1} << 24;

// Encodes one code point as UTF-8.
void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | cp >> 6));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | cp >> 12));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x110000) {
    out.push_back(static_cast<char>(0xF0 | cp >> 18));
    out.push_back(static_cast<char>(0x80 | (cp >> 12 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp >> 6 & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// A str object's text, read from its compact representation (the only one
// code objects use); "?" for anything else.
std::string read_unicode(uintptr_t object) {
  const PythonLayout& layout = *g_interpreter.layout;
  if (!is_object_of_type(object, g_interpreter.unicode_type)) return "?";
  const int64_t length = read_at<int64_t>(object, pyobject::kUnicodeLength);
  const uint32_t state = read_at<uint32_t>(object, pyobject::kUnicodeState);
  const unsigned kind = state >> 2 & 7;
  const bool compact = (state >> 5 & 1) != 0;
  const bool ascii = (state >> 6 & 1) != 0;
  if (!compact || length < 0 || length > kMaxStringCodePoints) return "?";
  const uintptr_t data = object + (ascii ? layout.unicode_ascii_data : layout.unicode_compact_data);
  std::string text;
  for (int64_t i = 0; i < length; ++i) {
    uint32_t cp;
    switch (kind) {
      case 1: cp = read_at<uint8_t>(data, static_cast<size_t>(i)); break;
      case 2: cp = read_at<uint16_t>(data, static_cast<size_t>(i) * 2); break;
      case 4: cp = read_at<uint32_t>(data, static_cast<size_t>(i) * 4); break;
      default: return "?";
    }
    append_utf8(text, cp);
  }
  return text;
}

// The same text into a fixed buffer: bytes written (a code point that would
// not fit ends the text).
size_t write_unicode(uintptr_t object, char* out, size_t capacity) noexcept {
  const PythonLayout& layout = *g_interpreter.layout;
  auto put = [&](const char* text, size_t n) -> size_t {
    const size_t k = n < capacity ? n : capacity;
    std::memcpy(out, text, k);
    return k;
  };
  if (!is_object_of_type(object, g_interpreter.unicode_type)) return put("?", 1);
  const int64_t length = read_at<int64_t>(object, pyobject::kUnicodeLength);
  const uint32_t state = read_at<uint32_t>(object, pyobject::kUnicodeState);
  const unsigned kind = state >> 2 & 7;
  const bool compact = (state >> 5 & 1) != 0;
  const bool ascii = (state >> 6 & 1) != 0;
  if (!compact || length < 0 || length > kMaxStringCodePoints) return put("?", 1);
  const uintptr_t data = object + (ascii ? layout.unicode_ascii_data : layout.unicode_compact_data);
  size_t used = 0;
  for (int64_t i = 0; i < length; ++i) {
    uint32_t cp;
    switch (kind) {
      case 1: cp = read_at<uint8_t>(data, static_cast<size_t>(i)); break;
      case 2: cp = read_at<uint16_t>(data, static_cast<size_t>(i) * 2); break;
      case 4: cp = read_at<uint32_t>(data, static_cast<size_t>(i) * 4); break;
      default: return used;
    }
    char utf8[4];
    size_t n;
    if (cp < 0x80) {
      utf8[0] = static_cast<char>(cp);
      n = 1;
    } else if (cp < 0x800) {
      utf8[0] = static_cast<char>(0xC0 | cp >> 6);
      utf8[1] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 2;
    } else if (cp < 0x10000) {
      utf8[0] = static_cast<char>(0xE0 | cp >> 12);
      utf8[1] = static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      utf8[2] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 3;
    } else if (cp < 0x110000) {
      utf8[0] = static_cast<char>(0xF0 | cp >> 18);
      utf8[1] = static_cast<char>(0x80 | (cp >> 12 & 0x3F));
      utf8[2] = static_cast<char>(0x80 | (cp >> 6 & 0x3F));
      utf8[3] = static_cast<char>(0x80 | (cp & 0x3F));
      n = 4;
    } else {
      continue;
    }
    if (used + n > capacity) break;
    std::memcpy(out + used, utf8, n);
    used += n;
  }
  return used;
}

// A bytes object's size, or -1 when `object` is not one (or implausible).
int64_t bytes_size(uintptr_t object) {
  if (!is_object_of_type(object, g_interpreter.bytes_type)) return -1;
  const int64_t size = read_at<int64_t>(object, pyobject::kVarSize);
  return size >= 0 && size <= kMaxLineTableBytes ? size : -1;
}

int32_t line_of_instruction(uintptr_t code, int32_t instruction) {
  const PythonLayout& layout = *g_interpreter.layout;
  const int32_t first_line = read_at<int32_t>(code, layout.code_first_line);
  if (instruction < 0) return first_line;
  if (layout.code_bytes != kAbsent) {
    // Before 3.11 the hot path did not look at the bytecode's length.
    const int64_t code_bytes = bytes_size(read_at<uintptr_t>(code, layout.code_bytes));
    if (code_bytes < 0 || instruction >= code_bytes / static_cast<int64_t>(kCodeUnitBytes)) return -1;
  }
  const auto table = read_at<uintptr_t>(code, layout.code_line_table);
  const int64_t table_bytes = bytes_size(table);
  if (table_bytes < 0) return -1;
  return line_of_code_unit(layout.line_table, reinterpret_cast<const uint8_t*>(table + pyobject::kBytesData),
                           static_cast<size_t>(table_bytes), first_line, instruction);
}

}  // namespace

bool init_python_frames() noexcept {
  if (g_ready.load(std::memory_order_acquire)) return true;
  PythonInterpreter interpreter;
  if (!find_python_interpreter(&interpreter)) return false;
  g_interpreter = interpreter;
  g_ready.store(true, std::memory_order_release);
  return true;
}

PythonKeys capture_python_keys(PythonFrameKey* keys, uint32_t depth) noexcept {
  if (!g_ready.load(std::memory_order_acquire) || g_interpreter.is_initialized() == 0) return {};
  const auto thread_state = reinterpret_cast<uintptr_t>(g_interpreter.get_this_thread_state());
  if (thread_state == 0 || (thread_state & 7) != 0) return {};
  return g_interpreter.walk(g_interpreter, thread_state, keys, depth);
}

PythonFrameText describe_python_frame(const PythonFrameKey& key, char* file, size_t file_capacity, char* function,
                                      size_t function_capacity) noexcept {
  PythonFrameText text;
  if (!g_ready.load(std::memory_order_acquire)) return text;
  const PythonLayout& layout = *g_interpreter.layout;
  text.file_bytes = static_cast<uint16_t>(
      write_unicode(read_at<uintptr_t>(key.code, layout.code_filename), file, file_capacity));
  text.function_bytes = static_cast<uint16_t>(
      write_unicode(read_at<uintptr_t>(key.code, layout.code_function), function, function_capacity));
  text.line = line_of_instruction(key.code, key.instruction);
  return text;
}

ResolvedPythonFrame resolve_python_frame(const PythonFrameKey& key) {
  const PythonLayout& layout = *g_interpreter.layout;
  ResolvedPythonFrame frame;
  frame.file = read_unicode(read_at<uintptr_t>(key.code, layout.code_filename));
  frame.function = read_unicode(read_at<uintptr_t>(key.code, layout.code_function));
  frame.line = line_of_instruction(key.code, key.instruction);
  return frame;
}

}  // namespace proflaunch::stacks
