// The CPython interpreter of this process: found through its exported C API,
// its version read without the GIL, and the PythonLayout of that version
// picked (python_layout_3*.h). Cold: at start and when libraries are loaded.
#pragma once

#include <cstdint>

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {

struct PythonInterpreter {
  const PythonLayout* layout = nullptr;
  // A thread-specific-data read: the calling thread's PyThreadState, or null
  // when the thread never ran Python code. Safe without the GIL.
  void* (*get_this_thread_state)() = nullptr;
  // Reads _PyRuntime.initialized, which finalization clears before it frees
  // thread states (a daemon thread may still call CUDA then).
  int (*is_initialized)() = nullptr;
  uintptr_t code_type = 0;     // &PyCode_Type
  uintptr_t frame_type = 0;    // &PyFrame_Type
  uintptr_t unicode_type = 0;  // &PyUnicode_Type
  uintptr_t bytes_type = 0;    // &PyBytes_Type
};

// Fills `out` when the process has a CPython whose layout is known; false
// otherwise: no interpreter (yet), or one of another version or build, which
// is said once on stderr.
bool find_python_interpreter(PythonInterpreter* out) noexcept;

// The layout of CPython major.minor, or null: the one list of supported
// versions.
const PythonLayout* python_layout_for(unsigned major, unsigned minor) noexcept;

}  // namespace proflaunch::stacks
