#include "preload/stacks/python_interpreter.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "preload/base/log.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/stacks/python_frame_walk.h"
#include "preload/stacks/python_layout_310.h"
#include "preload/stacks/python_layout_311.h"
#include "preload/stacks/python_layout_312.h"
#include "preload/stacks/python_layout_313.h"
#include "preload/stacks/python_layout_39.h"

namespace proflaunch::stacks {
namespace {

// The one list of supported versions: each layout with the walk built for it.
struct SupportedPython {
  const PythonLayout& layout;
  PythonWalkFn walk;
};
constexpr SupportedPython kSupported[] = {
    {py39::kLayout, python_walk::walk<py39::kLayout>},    {py310::kLayout, python_walk::walk<py310::kLayout>},
    {py311::kLayout, python_walk::walk<py311::kLayout>},  {py312::kLayout, python_walk::walk<py312::kLayout>},
    {py313::kLayout, python_walk::walk<py313::kLayout>},
};

const SupportedPython* supported(unsigned major, unsigned minor) {
  for (const SupportedPython& python : kSupported)
    if (python.layout.major == major && python.layout.minor == minor) return &python;
  return nullptr;
}

std::atomic<bool> g_refusal_said{false};

void* lookup(const char* name) { return intercept::real_dlsym()(RTLD_DEFAULT, name); }

struct Version {
  unsigned major = 0;
  unsigned minor = 0;
};

// The interpreter's version. Py_Version (3.11+) is a constant. Before 3.11
// only Py_GetVersion() says it: it formats the version into a static buffer
// (no allocation, no GIL, no interpreter state), so it is safe to call
// before or without the interpreter running; it is called once per process,
// so the shim does not write that buffer while the program might read it.
bool running_version(Version* out) {
  if (const auto* hex = static_cast<const unsigned long*>(lookup("Py_Version"))) {
    out->major = static_cast<unsigned>(*hex >> 24 & 0xff);
    out->minor = static_cast<unsigned>(*hex >> 16 & 0xff);
    return true;
  }
  using GetVersionFn = const char* (*)();
  static std::atomic<bool> asked{false};
  static Version asked_version;  // written once, before `answered`
  static std::atomic<bool> answered{false};
  if (answered.load(std::memory_order_acquire)) {
    *out = asked_version;
    return true;
  }
  auto* get_version = reinterpret_cast<GetVersionFn>(lookup("Py_GetVersion"));
  if (get_version == nullptr || asked.exchange(true)) return false;
  const char* text = get_version();
  Version version;
  if (text == nullptr || std::sscanf(text, "%u.%u", &version.major, &version.minor) != 2) return false;
  asked_version = version;
  answered.store(true, std::memory_order_release);
  *out = version;
  return true;
}

void say_refused(const char* why_a, const char* why_b = nullptr) {
  if (g_refusal_said.exchange(true)) return;
  print_line(why_a, why_b, "; stacks of this process are native only");
}

uint64_t basic_size(uintptr_t type) {
  uint64_t size;
  std::memcpy(&size, reinterpret_cast<const void*>(type + pyobject::kTypeBasicSize), sizeof size);
  return size;
}

}  // namespace

const PythonLayout* python_layout_for(unsigned major, unsigned minor) noexcept {
  const SupportedPython* python = supported(major, minor);
  return python != nullptr ? &python->layout : nullptr;
}

bool find_python_interpreter(PythonInterpreter* out) noexcept {
  Version version;
  if (!running_version(&version)) return false;
  char text[96];
  const SupportedPython* python = supported(version.major, version.minor);
  if (python == nullptr) {
    std::snprintf(text, sizeof text, "Python %u.%u: Python frames are recorded for CPython 3.9 to 3.13",
                  version.major, version.minor);
    say_refused(text);
    return false;
  }
  const PythonLayout* layout = &python->layout;
  PythonInterpreter found;
  found.layout = layout;
  found.walk = python->walk;
  found.get_this_thread_state = reinterpret_cast<void* (*)()>(lookup("PyGILState_GetThisThreadState"));
  found.is_initialized = reinterpret_cast<int (*)()>(lookup("Py_IsInitialized"));
  found.code_type = reinterpret_cast<uintptr_t>(lookup("PyCode_Type"));
  found.frame_type = reinterpret_cast<uintptr_t>(lookup("PyFrame_Type"));
  found.unicode_type = reinterpret_cast<uintptr_t>(lookup("PyUnicode_Type"));
  found.bytes_type = reinterpret_cast<uintptr_t>(lookup("PyBytes_Type"));
  if (found.get_this_thread_state == nullptr || found.is_initialized == nullptr || found.code_type == 0 ||
      found.frame_type == 0 || found.unicode_type == 0 || found.bytes_type == 0)
    return false;
  // The type objects say how big their instances are: a build whose code
  // objects (or, before 3.11, frame objects) differ from the release layout
  // - free-threaded, Py_TRACE_REFS, a patched interpreter - is not read.
  const uint64_t code_size = basic_size(found.code_type);
  const bool frame_size_known = layout->frame_basic_size != kAbsent;
  const uint64_t frame_size = frame_size_known ? basic_size(found.frame_type) : 0;
  const bool code_differs = code_size != layout->code_basic_size;
  if (code_differs || (frame_size_known && frame_size != layout->frame_basic_size)) {
    std::snprintf(text, sizeof text, "Python %u.%u: %s objects of %llu bytes, not %u: not a default build",
                  version.major, version.minor, code_differs ? "code" : "frame",
                  static_cast<unsigned long long>(code_differs ? code_size : frame_size),
                  static_cast<unsigned>(code_differs ? layout->code_basic_size : layout->frame_basic_size));
    say_refused(text, " (Python frames are not read)");
    return false;
  }
  *out = found;
  return true;
}

}  // namespace proflaunch::stacks
