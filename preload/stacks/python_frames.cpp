#include "preload/stacks/python_frames.h"

#include <atomic>
#include <cstring>

#include "formats/records.h"
#include "preload/stacks/python_interpreter.h"
#include "preload/stacks/python_line_table.h"

namespace proflaunch::stacks {
namespace {

PythonInterpreter g_interpreter;
std::atomic<bool> g_ready{false};

// Frames walked at most, skipped ones included: a corrupted chain (which
// should not happen, see the header) cannot keep us walking.
constexpr uint32_t kMaxFramesWalked = 1024;
constexpr int64_t kMaxStringCodePoints = 1024;
constexpr int64_t kMaxLineTableBytes = int64_t{1} << 24;

template <typename T>
T read_at(uintptr_t base, size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(base + offset), sizeof value);
  return value;
}

bool is_object_of_type(uintptr_t object, uintptr_t type) {
  return object != 0 && (object & 7) == 0 && read_at<uintptr_t>(object, pyobject::kType) == type;
}

// 3.9, 3.10: PyFrameObjects linked by f_back. Each one runs in its own
// _PyEval_EvalFrameDefault call, so each is an entry frame.
PythonKeys walk_frame_objects(const PythonLayout& layout, uintptr_t thread_state, PythonFrameKey* keys,
                              uint32_t depth) {
  PythonKeys result;
  auto frame = read_at<uintptr_t>(thread_state, layout.thread_state_frame);
  for (uint32_t walked = 0; frame != 0 && walked < kMaxFramesWalked; ++walked) {
    if (!is_object_of_type(frame, g_interpreter.frame_type)) break;
    const auto code = read_at<uintptr_t>(frame, layout.frame_code);
    if (!is_object_of_type(code, g_interpreter.code_type)) break;
    if (result.count == depth) {
      result.truncated = true;
      break;
    }
    // -1 before the first instruction (a profile hook's call event): the
    // interpreter then says the first line, and so does the cold path.
    const auto lasti = read_at<int32_t>(frame, layout.frame_instruction);
    PythonFrameKey& key = keys[result.count++];
    key.code = code;
    key.instruction = lasti < 0 ? -1 : (layout.lasti_in_bytes ? lasti / static_cast<int32_t>(kCodeUnitBytes) : lasti);
    key.flags = format::kPythonFrameEntry;
    frame = read_at<uintptr_t>(frame, layout.frame_previous);
  }
  return result;
}

// 3.11+: _PyInterpreterFrames linked by previous, the current one in the
// thread state (3.13) or in its _PyCFrame (3.11, 3.12). Where C entered the
// interpreter the frame says so (3.11 is_entry), or the entry pushed a frame
// owned by the C stack just below it (3.12+), which is not shown.
PythonKeys walk_interpreter_frames(const PythonLayout& layout, uintptr_t thread_state, PythonFrameKey* keys,
                                   uint32_t depth) {
  PythonKeys result;
  auto frame = read_at<uintptr_t>(thread_state, layout.thread_state_frame);
  if (layout.cframe_current_frame != kAbsent) {
    if (frame == 0 || (frame & 7) != 0) return result;
    frame = read_at<uintptr_t>(frame, layout.cframe_current_frame);
  }
  bool previous_walked_was_kept = false;
  for (uint32_t walked = 0; frame != 0 && walked < kMaxFramesWalked; ++walked) {
    if ((frame & 7) != 0) break;
    const auto owner = read_at<int8_t>(frame, layout.frame_owner);
    const auto previous = read_at<uintptr_t>(frame, layout.frame_previous);
    if (owner == layout.owned_by_cstack && layout.owned_by_cstack >= 0) {
      if (previous_walked_was_kept) keys[result.count - 1].flags |= format::kPythonFrameEntry;
      previous_walked_was_kept = false;
      frame = previous;
      continue;
    }
    if (owner != layout.owned_by_thread && owner != layout.owned_by_generator &&
        owner != layout.owned_by_frame_object)
      break;
    const auto code = read_at<uintptr_t>(frame, layout.frame_code);
    if (!is_object_of_type(code, g_interpreter.code_type)) break;
    const auto current = read_at<uintptr_t>(frame, layout.frame_instruction);
    const uintptr_t first_unit = code + layout.code_units;
    const int64_t instruction = (static_cast<int64_t>(current) - static_cast<int64_t>(first_unit)) /
                                static_cast<int64_t>(kCodeUnitBytes);
    // A frame still setting itself up (before its first traceable
    // instruction; 3.13's __init__ shim frames always) is not shown, as the
    // interpreter itself hides it.
    const auto first_traceable = read_at<int32_t>(code, layout.code_first_traceable);
    if (owner != layout.owned_by_generator && instruction < first_traceable) {
      previous_walked_was_kept = false;
      frame = previous;
      continue;
    }
    if (result.count == depth) {
      result.truncated = true;
      break;
    }
    const auto unit_count = read_at<int64_t>(code, pyobject::kVarSize);
    PythonFrameKey& key = keys[result.count++];
    key.code = code;
    key.instruction = instruction >= 0 && instruction < unit_count ? static_cast<int32_t>(instruction) : -1;
    key.flags = layout.frame_is_entry != kAbsent && read_at<bool>(frame, layout.frame_is_entry)
                    ? uint32_t{format::kPythonFrameEntry}
                    : 0u;
    previous_walked_was_kept = true;
    frame = previous;
  }
  return result;
}

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
  const PythonLayout& layout = *g_interpreter.layout;
  if (layout.chain == FrameChain::kFrameObjects) return walk_frame_objects(layout, thread_state, keys, depth);
  return walk_interpreter_frames(layout, thread_state, keys, depth);
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
