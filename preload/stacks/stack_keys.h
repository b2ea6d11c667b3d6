// What a captured stack is before it is interned (stack_catalog.h): native
// return addresses (native_unwinder.h) and Python frame keys
// (python_frames.h), as the hot path produces them.
#pragma once

#include <cstdint>

namespace proflaunch::stacks {

// How many return addresses a native capture filled in.
struct NativeStack {
  uint32_t count = 0;
  bool truncated = false;
};

// One Python frame as the hot path sees it: the code object and the
// instruction offset. Resolved to file, function and line on the cold path.
struct PythonFrameKey {
  uintptr_t code;
  int32_t instruction;  // index of the code unit being executed, -1 unknown
  uint32_t flags;       // format::PythonFrameFlags
};

// How many Python frame keys a capture filled in.
struct PythonKeys {
  uint32_t count = 0;
  bool truncated = false;
};

}  // namespace proflaunch::stacks
