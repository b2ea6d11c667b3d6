// The hot path of Python frames: walking the calling thread's frame chain,
// shared by every version and instantiated once per PythonLayout (the
// offsets are constants in each instance). Only python_interpreter.cpp
// instantiates it, for the versions it supports.
//
// Nothing here calls into the interpreter, takes the GIL or allocates; every
// pointer is checked before it is followed (alignment, the type of each
// frame and code object, owner values) and the walk is bounded.
#pragma once

#include <cstdint>
#include <cstring>

#include "formats/records.h"
#include "preload/stacks/python_layout.h"
#include "preload/stacks/stack_keys.h"

namespace proflaunch::stacks {

struct PythonInterpreter;

// The calling thread's frames from its thread state: walk<Layout> below.
using PythonWalkFn = PythonKeys (*)(const PythonInterpreter& python, uintptr_t thread_state,
                                    PythonFrameKey* keys, uint32_t depth);

// What a walk reads of the running interpreter, found at start
// (python_interpreter.h).
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

}  // namespace proflaunch::stacks

namespace proflaunch::stacks::python_walk {

// Frames walked at most, skipped ones included: a corrupted chain (which
// should not happen: the thread's own frames cannot change while it is in
// native code) cannot keep us walking.
inline constexpr uint32_t kMaxFramesWalked = 1024;

template <typename T>
T read_at(uintptr_t base, size_t offset) {
  T value;
  std::memcpy(&value, reinterpret_cast<const void*>(base + offset), sizeof value);
  return value;
}

inline bool is_object_of_type(uintptr_t object, uintptr_t type) {
  return object != 0 && (object & 7) == 0 && read_at<uintptr_t>(object, pyobject::kType) == type;
}

// 3.9, 3.10: PyFrameObjects linked by f_back. Each one runs in its own
// _PyEval_EvalFrameDefault call, so each is an entry frame.
template <const PythonLayout& L>
PythonKeys walk_frame_objects(const PythonInterpreter& python, uintptr_t thread_state, PythonFrameKey* keys,
                              uint32_t depth) {
  PythonKeys result;
  auto frame = read_at<uintptr_t>(thread_state, L.thread_state_frame);
  for (uint32_t walked = 0; frame != 0 && walked < kMaxFramesWalked; ++walked) {
    if (!is_object_of_type(frame, python.frame_type)) break;
    const auto code = read_at<uintptr_t>(frame, L.frame_code);
    if (!is_object_of_type(code, python.code_type)) break;
    if (result.count == depth) {
      result.truncated = true;
      break;
    }
    // -1 before the first instruction (a profile hook's call event): the
    // interpreter then says the first line, and so does the cold path. The
    // cold path also checks the index against the bytecode's length.
    const auto lasti = read_at<int32_t>(frame, L.frame_instruction);
    PythonFrameKey& key = keys[result.count++];
    key.code = code;
    key.instruction = lasti < 0 ? -1 : (L.lasti_in_bytes ? lasti / static_cast<int32_t>(kCodeUnitBytes) : lasti);
    key.flags = format::kPythonFrameEntry;
    frame = read_at<uintptr_t>(frame, L.frame_previous);
  }
  return result;
}

// 3.11+: _PyInterpreterFrames linked by previous, the current one in the
// thread state (3.13) or in its _PyCFrame (3.11, 3.12). Where C entered the
// interpreter the frame says so (3.11 is_entry), or the entry pushed a frame
// owned by the C stack just below it (3.12+), which is not shown.
template <const PythonLayout& L>
PythonKeys walk_interpreter_frames(const PythonInterpreter& python, uintptr_t thread_state, PythonFrameKey* keys,
                                   uint32_t depth) {
  PythonKeys result;
  auto frame = read_at<uintptr_t>(thread_state, L.thread_state_frame);
  if constexpr (L.cframe_current_frame != kAbsent) {
    if (frame == 0 || (frame & 7) != 0) return result;
    frame = read_at<uintptr_t>(frame, L.cframe_current_frame);
  }
  bool previous_walked_was_kept = false;
  for (uint32_t walked = 0; frame != 0 && walked < kMaxFramesWalked; ++walked) {
    if ((frame & 7) != 0) break;
    const auto owner = read_at<int8_t>(frame, L.frame_owner);
    const auto previous = read_at<uintptr_t>(frame, L.frame_previous);
    if constexpr (L.owned_by_cstack >= 0) {
      if (owner == L.owned_by_cstack) {
        if (previous_walked_was_kept) keys[result.count - 1].flags |= format::kPythonFrameEntry;
        previous_walked_was_kept = false;
        frame = previous;
        continue;
      }
    }
    if (owner != L.owned_by_thread && owner != L.owned_by_generator && owner != L.owned_by_frame_object) break;
    const auto code = read_at<uintptr_t>(frame, L.frame_code);
    if (!is_object_of_type(code, python.code_type)) break;
    const auto current = read_at<uintptr_t>(frame, L.frame_instruction);
    const int64_t instruction =
        (static_cast<int64_t>(current) - static_cast<int64_t>(code + L.code_units)) /
        static_cast<int64_t>(kCodeUnitBytes);
    // A frame still setting itself up (before its first traceable
    // instruction; 3.13's __init__ shim frames always) is not shown, as the
    // interpreter itself hides it.
    const auto first_traceable = read_at<int32_t>(code, L.code_first_traceable);
    if (owner != L.owned_by_generator && instruction < first_traceable) {
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
    key.flags = 0;
    if constexpr (L.frame_is_entry != kAbsent)
      if (read_at<uint8_t>(frame, L.frame_is_entry) != 0) key.flags = format::kPythonFrameEntry;
    previous_walked_was_kept = true;
    frame = previous;
  }
  return result;
}

template <const PythonLayout& L>
PythonKeys walk(const PythonInterpreter& python, uintptr_t thread_state, PythonFrameKey* keys, uint32_t depth) {
  if constexpr (L.chain == FrameChain::kFrameObjects)
    return walk_frame_objects<L>(python, thread_state, keys, depth);
  else
    return walk_interpreter_frames<L>(python, thread_state, keys, depth);
}

}  // namespace proflaunch::stacks::python_walk
