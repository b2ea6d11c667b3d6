// The stacks a process has defined: two lock-free tables (native, Python)
// from a stack's hash to its id, and the cold path that defines a stack the
// first time it is seen.
//
// Cold path: one mutex (lock order: this mutex, then the definitions mutex).
// Before a native stack is defined the module map is refreshed, so every
// stack's modules precede it in the catalog. Nothing here calls dlsym or
// dlopen with the mutex held: a thread inside dlopen holds the loader's lock
// while library constructors run, and a constructor may make a traced call.
#pragma once

#include <cstdint>

#include "preload/stacks/python_frames.h"
#include "preload/stacks/stack_keys.h"

namespace proflaunch::stacks {

// Maps the tables. Cold; false when out of memory.
bool init_stack_catalog() noexcept;

// The id of this native stack, defining it on first sight; 0 when it cannot
// be recorded (table full: counted, warned once).
uint32_t native_stack_id(const uint64_t* frames, const NativeStack& stack) noexcept;

// The same for Python frames. Keys that resolve to the same file, function
// and line for every frame share one id.
uint32_t python_stack_id(const PythonFrameKey* keys, const PythonKeys& stack) noexcept;

// The id of a Python stack already resolved to text (CPU samples resolve
// their frames in the signal handler: the code objects may be gone by the
// time the writer defines the stack). Deduplicated by content with the
// stacks above. Cold: takes the mutex; not from a signal handler.
uint32_t python_stack_id_of_frames(const ResolvedPythonFrame* frames, const uint32_t* flags,
                                   const PythonKeys& stack) noexcept;

// Refreshes the module map if objects were loaded or unloaded, and looks for
// a Python interpreter among new ones. Takes the mutex; not from a hook.
void refresh_modules() noexcept;

// fork: the child must not inherit the mutex held by another thread.
void catalog_lock_before_fork() noexcept;
void catalog_unlock_after_fork() noexcept;

}  // namespace proflaunch::stacks
