// The CPython interpreter of this process: found through its exported C API,
// its version read without the GIL, and the PythonLayout of that version and
// the frame walk built for it picked (python_layout_3*.h,
// python_frame_walk.h). Cold: at start and when libraries are loaded.
#pragma once

#include <cstdint>

#include "preload/stacks/python_frame_walk.h"
#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {

// Fills `out` when the process has a CPython whose layout is known; false
// otherwise: no interpreter (yet), or one of another version or build, which
// is said once on stderr.
bool find_python_interpreter(PythonInterpreter* out) noexcept;

// The layout of CPython major.minor, or null: the one list of supported
// versions.
const PythonLayout* python_layout_for(unsigned major, unsigned minor) noexcept;

}  // namespace proflaunch::stacks
