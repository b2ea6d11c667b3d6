#include "preload/stacks/python_frames.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "formats/records.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/log.h"
#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {
namespace {

namespace layout = py311;

// A thread that is not running Python code has no thread state here; the
// function only reads the interpreter's thread-specific key.
using GetThisThreadStateFn = void* (*)();
// Reads _PyRuntime.initialized, which finalization clears before it frees
// thread states (a daemon thread may still call CUDA then).
using IsInitializedFn = int (*)();

struct PythonInterpreter {
  GetThisThreadStateFn get_this_thread_state;
  IsInitializedFn is_initialized;
  uintptr_t code_type;
  uintptr_t unicode_type;
  uintptr_t bytes_type;
};
PythonInterpreter g_interpreter;
std::atomic<bool> g_ready{false};
std::atomic<bool> g_version_warned{false};

// Frames walked at most, skipped ones included: a corrupted chain (which
// should not happen, see the header) cannot keep us walking.
constexpr uint32_t kMaxFramesWalked = 1024;
constexpr int64_t kMaxStringCodePoints = 1024;

template <typename T>
T read_at(uintptr_t base, size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(base + offset), sizeof value);
  return value;
}

void* lookup(const char* name) { return intercept::real_dlsym()(RTLD_DEFAULT, name); }

void warn_unsupported_version(uint64_t version) {
  if (g_version_warned.exchange(true)) return;
  char text[128];
  const unsigned major = static_cast<unsigned>(version >> 24 & 0xff);
  const unsigned minor = static_cast<unsigned>(version >> 16 & 0xff);
  snprintf(text, sizeof text, "Python %u.%u: Python frames are recorded for CPython 3.11 only; "
           "stacks of this process are native only", major, minor);
  print_line(text);
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
  if (object == 0 || (object & 7) != 0 || read_at<uintptr_t>(object, layout::kObjectType) != g_interpreter.unicode_type)
    return "?";
  const int64_t length = read_at<int64_t>(object, layout::kUnicodeLength);
  const uint32_t state = read_at<uint32_t>(object, layout::kUnicodeState);
  const unsigned kind = state >> 2 & 7;
  const bool compact = (state >> 5 & 1) != 0;
  const bool ascii = (state >> 6 & 1) != 0;
  if (!compact || length < 0 || length > kMaxStringCodePoints) return "?";
  const uintptr_t data = object + (ascii ? layout::kAsciiData : layout::kCompactData);
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

// The 3.11 location table (Objects/locations.md in CPython): entries of a
// first byte 1ccccnnn (code c, n+1 code units) followed by code-specific
// bytes; line deltas are 6-bit-chunk varints.
class LocationReader {
 public:
  LocationReader(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}
  bool done() const { return p_ >= end_; }
  uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  uint32_t varint() {
    uint32_t read = byte();
    uint32_t value = read & 63;
    uint32_t shift = 0;
    while ((read & 64) != 0 && shift < 30) {
      read = byte();
      shift += 6;
      value |= (read & 63) << shift;
    }
    return value;
  }
  int32_t signed_varint() {
    const uint32_t value = varint();
    return (value & 1) != 0 ? -static_cast<int32_t>(value >> 1) : static_cast<int32_t>(value >> 1);
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

int32_t line_of_instruction(uintptr_t code, int32_t instruction) {
  const int32_t first_line = read_at<int32_t>(code, layout::kCodeFirstLineNo);
  if (instruction < 0) return first_line;
  const uintptr_t table = read_at<uintptr_t>(code, layout::kCodeLinetable);
  if (table == 0 || read_at<uintptr_t>(table, layout::kObjectType) != g_interpreter.bytes_type)
    return -1;
  const int64_t table_bytes = read_at<int64_t>(table, layout::kVarObjectSize);
  if (table_bytes < 0 || table_bytes > (int64_t{1} << 24)) return -1;
  const auto* begin = reinterpret_cast<const uint8_t*>(table + layout::kBytesData);
  LocationReader reader(begin, begin + table_bytes);
  int32_t line = first_line;
  int64_t unit = 0;
  while (!reader.done()) {
    const uint8_t first = reader.byte();
    if ((first & 0x80) == 0) return -1;  // not at an entry start: corrupt
    const unsigned kind = first >> 3 & 15;
    const int64_t units = (first & 7) + 1;
    int32_t delta = 0;
    switch (kind) {
      case 15: break;  // no location
      case 14:         // long form: line delta, end line, column, end column
        delta = reader.signed_varint();
        reader.varint();
        reader.varint();
        reader.varint();
        break;
      case 13: delta = reader.signed_varint(); break;  // no columns
      case 10: case 11: case 12:                        // one line: delta, two columns
        delta = static_cast<int32_t>(kind) - 10;
        reader.byte();
        reader.byte();
        break;
      default: reader.byte(); break;  // short form: same line, one column byte
    }
    line += delta;
    if (instruction < unit + units) return kind == 15 ? -1 : line;
    unit += units;
  }
  return -1;
}

}  // namespace

bool init_python_frames() noexcept {
  if (g_ready.load(std::memory_order_acquire)) return true;
  const auto* version = static_cast<const unsigned long*>(lookup("Py_Version"));
  if (version == nullptr) {
    // Py_Version exists from 3.11 on; an older interpreter still says its
    // version (a static string: safe to ask without the GIL).
    using GetVersionFn = const char* (*)();
    if (auto* get_version = reinterpret_cast<GetVersionFn>(lookup("Py_GetVersion"))) {
      const char* text = get_version();
      unsigned major = 0, minor = 0;
      if (text != nullptr && std::sscanf(text, "%u.%u", &major, &minor) == 2)
        warn_unsupported_version(uint64_t{major} << 24 | uint64_t{minor} << 16);
    }
    return false;
  }
  if ((*version >> 16) != layout::kVersionMajorMinor) {
    warn_unsupported_version(*version);
    return false;
  }
  PythonInterpreter interpreter;
  interpreter.get_this_thread_state =
      reinterpret_cast<GetThisThreadStateFn>(lookup("PyGILState_GetThisThreadState"));
  interpreter.is_initialized = reinterpret_cast<IsInitializedFn>(lookup("Py_IsInitialized"));
  interpreter.code_type = reinterpret_cast<uintptr_t>(lookup("PyCode_Type"));
  interpreter.unicode_type = reinterpret_cast<uintptr_t>(lookup("PyUnicode_Type"));
  interpreter.bytes_type = reinterpret_cast<uintptr_t>(lookup("PyBytes_Type"));
  if (interpreter.get_this_thread_state == nullptr || interpreter.is_initialized == nullptr ||
      interpreter.code_type == 0 ||
      interpreter.unicode_type == 0 || interpreter.bytes_type == 0)
    return false;
  g_interpreter = interpreter;
  g_ready.store(true, std::memory_order_release);
  return true;
}

PythonKeys capture_python_keys(PythonFrameKey* keys, uint32_t depth) noexcept {
  PythonKeys result;
  if (!g_ready.load(std::memory_order_acquire) || g_interpreter.is_initialized() == 0) return result;
  const auto thread_state = reinterpret_cast<uintptr_t>(g_interpreter.get_this_thread_state());
  if (thread_state == 0) return result;
  const auto cframe = read_at<uintptr_t>(thread_state, layout::kThreadStateCFrame);
  if (cframe == 0 || (cframe & 7) != 0) return result;
  auto frame = read_at<uintptr_t>(cframe, layout::kCFrameCurrentFrame);
  for (uint32_t walked = 0; frame != 0 && walked < kMaxFramesWalked; ++walked) {
    if ((frame & 7) != 0) break;
    const auto code = read_at<uintptr_t>(frame, layout::kFrameCode);
    if (code == 0 || (code & 7) != 0 ||
        read_at<uintptr_t>(code, layout::kObjectType) != g_interpreter.code_type)
      break;
    const char owner = read_at<char>(frame, layout::kFrameOwner);
    if (owner != layout::kFrameOwnedByThread && owner != layout::kFrameOwnedByGenerator &&
        owner != layout::kFrameOwnedByFrameObject)
      break;
    const auto previous = read_at<uintptr_t>(frame, layout::kFramePrevious);
    const auto prev_instr = read_at<uintptr_t>(frame, layout::kFramePrevInstr);
    const uintptr_t first_unit = code + layout::kCodeAdaptive;
    const auto unit_count = read_at<int64_t>(code, layout::kVarObjectSize);
    const int64_t instruction = (static_cast<int64_t>(prev_instr) - static_cast<int64_t>(first_unit)) /
                                static_cast<int64_t>(layout::kCodeUnitBytes);
    // A frame still setting itself up (before its first traceable
    // instruction) is not shown, as the interpreter itself hides it.
    const auto first_traceable = read_at<int32_t>(code, layout::kCodeFirstTraceable);
    if (owner != layout::kFrameOwnedByGenerator && instruction < first_traceable) {
      frame = previous;
      continue;
    }
    if (result.count == depth) {
      result.truncated = true;
      break;
    }
    PythonFrameKey& key = keys[result.count++];
    key.code = code;
    key.instruction = instruction >= 0 && instruction < unit_count ? static_cast<int32_t>(instruction) : -1;
    key.flags = read_at<bool>(frame, layout::kFrameIsEntry) ? uint32_t{format::kPythonFrameEntry} : 0u;
    frame = previous;
  }
  return result;
}

ResolvedPythonFrame resolve_python_frame(const PythonFrameKey& key) {
  ResolvedPythonFrame frame;
  frame.file = read_unicode(read_at<uintptr_t>(key.code, layout::kCodeFilename));
  frame.function = read_unicode(read_at<uintptr_t>(key.code, layout::kCodeQualname));
  frame.line = line_of_instruction(key.code, key.instruction);
  return frame;
}

}  // namespace proflaunch::stacks
