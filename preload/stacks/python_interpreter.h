// The CPython interpreter of this process: found through its exported C API,
// its version read without the GIL, and the PythonLayout of that version and
// the frame walk built for it picked (python_layout_3*.h,
// python_frame_walk.h). Cold: at start and when libraries are loaded.
#pragma once

#include <cstdint>

#include "preload/stacks/python_frames.h"
#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {

struct PythonInterpreter;

// The calling thread's frames from its thread state (python_frame_walk.h).
using PythonWalkFn = PythonKeys (*)(const PythonInterpreter& python, uintptr_t thread_state,
                                    PythonFrameKey* keys, uint32_t depth);

struct PythonInterpreter {
  const PythonLayout* layout = nullptr;
  PythonWalkFn walk = nullptr;
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
