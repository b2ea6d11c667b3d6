// Python frames of the calling thread, with no change to the program and
// without the GIL.
//
// A CUDA call made from Python runs with the GIL held (a C extension) or
// released (ctypes releases it around every foreign call; torch releases it
// inside its ops). Either way the calling thread is inside native code and
// its own Python frames cannot change until it returns, so they can be read
// directly from the interpreter's structures - the way py-spy reads them
// from outside the process - without the GIL and without calling into the
// interpreter: PyThreadState -> frame -> f_back ... (3.9, 3.10), or
// PyThreadState -> [cframe ->] current_frame -> previous ... (3.11+).
// Taking the GIL here could deadlock (another thread may hold it while it
// waits for this one), and the C API's frame functions allocate.
//
// Supported: CPython 3.9 to 3.13 (python_layout_3*.h, picked at start from
// the running interpreter's version by python_interpreter.cpp). Other
// versions and builds get no Python frames (one warning). Every pointer is
// checked before it is followed: the frame chain is bounded, each frame
// object must have PyFrame_Type as its type, each code object PyCode_Type,
// each string PyUnicode_Type.
#pragma once

#include <cstdint>
#include <string>

#include "preload/stacks/stack_keys.h"

namespace proflaunch::stacks {

// Looks for a supported CPython interpreter in the process (its C API
// symbols).
// Cold; may be called again when libraries were loaded. True once found.
bool init_python_frames() noexcept;

// The calling thread's Python frames, innermost first (none when the thread
// runs no Python code). Lock-free, allocation-free, no call into Python
// beyond PyGILState_GetThisThreadState (a thread-specific-data read).
PythonKeys capture_python_keys(PythonFrameKey* keys, uint32_t depth) noexcept;

struct ResolvedPythonFrame {
  std::string file;
  std::string function;
  int32_t line = -1;
};

// The same as resolve_python_frame, without allocating: for a signal
// handler (preload/sampling), which must resolve the frame while its code
// object is certainly alive. Writes the file and function names as UTF-8
// (cut at a character boundary to fit, not NUL-terminated) and returns
// their lengths; plain memory reads only.
struct PythonFrameText {
  uint16_t file_bytes = 0;
  uint16_t function_bytes = 0;
  int32_t line = -1;
};
PythonFrameText describe_python_frame(const PythonFrameKey& key, char* file, size_t file_capacity, char* function,
                                      size_t function_capacity) noexcept;

// Cold path, on the thread that captured `key`, before it returns to Python
// (the code object is alive: its frame holds a reference).
ResolvedPythonFrame resolve_python_frame(const PythonFrameKey& key);

}  // namespace proflaunch::stacks
