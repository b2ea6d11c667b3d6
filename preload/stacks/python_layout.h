// What a frame walk reads from a CPython interpreter, on x86-64: one
// PythonLayout per minor version (python_layout_3*.h), picked at run time
// from the running interpreter's version (python_interpreter.cpp).
//
// These are facts about the interpreter's internal structures (pystate.h,
// frameobject.h or internal/pycore_frame.h, code.h, unicodeobject.h), not
// part of its stable ABI: each holds for every release of its minor version
// and for no other. tests/unit/stacks/python_layout_3*_test.cpp check each
// against that version's own headers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch::stacks {

// The same in every version here (3.9 to 3.13, default builds: a debug
// build with Py_TRACE_REFS or a free-threaded 3.13 has a larger object
// header, which the start-up check of tp_basicsize refuses).
namespace pyobject {
inline constexpr size_t kType = 8;            // PyObject.ob_type
inline constexpr size_t kVarSize = 16;        // PyVarObject.ob_size
inline constexpr size_t kTypeBasicSize = 32;  // PyTypeObject.tp_basicsize
inline constexpr size_t kBytesData = 32;      // PyBytesObject.ob_sval
inline constexpr size_t kUnicodeLength = 16;  // PyASCIIObject.length (code points)
// PyASCIIObject.state, a bit field: interned:2 kind:3 compact:1 ascii:1 ...
inline constexpr size_t kUnicodeState = 32;
}  // namespace pyobject

// How the thread's frames are linked.
enum class FrameChain : uint8_t {
  // 3.9, 3.10: PyThreadState.frame -> PyFrameObject.f_back -> ...; every
  // frame runs in its own _PyEval_EvalFrameDefault call.
  kFrameObjects,
  // 3.11+: _PyInterpreterFrame.previous; one _PyEval_EvalFrameDefault call
  // runs a frame entered from C and the Python calls it makes.
  kInterpreterFrames,
};

// How a code object maps instructions to lines (python_line_table.h).
enum class LineTable : uint8_t {
  kLnotab,     // 3.9 co_lnotab: (byte delta, line delta) pairs
  kPep626,     // 3.10 co_linetable: (byte delta, line delta or -128) pairs
  kLocations,  // 3.11+ co_linetable: the location table, in code units
};

inline constexpr uint16_t kAbsent = 0xFFFF;  // a field this version does not have

struct PythonLayout {
  uint8_t major;
  uint8_t minor;
  FrameChain chain;
  LineTable line_table;

  // PyThreadState: the innermost frame (3.9/3.10 frame, 3.13
  // current_frame), or the _PyCFrame* whose current_frame is it (3.11/3.12
  // cframe, then cframe_current_frame).
  uint16_t thread_state_frame;
  uint16_t cframe_current_frame;  // kAbsent: thread_state_frame is the frame

  // The frame: PyFrameObject (3.9/3.10) or _PyInterpreterFrame (3.11+).
  uint16_t frame_code;         // f_code (3.13: f_executable)
  uint16_t frame_previous;     // f_back / previous
  // 3.9/3.10: int f_lasti (the last instruction started, -1 before the
  // first); 3.11+: _Py_CODEUNIT* prev_instr (3.13: instr_ptr).
  uint16_t frame_instruction;
  bool lasti_in_bytes;         // 3.9: f_lasti counts bytes; 3.10: code units
  uint16_t frame_owner;        // char owner (3.11+)
  uint16_t frame_is_entry;     // bool is_entry (3.11 only)
  int8_t owned_by_thread;
  int8_t owned_by_generator;
  int8_t owned_by_frame_object;
  int8_t owned_by_cstack;      // 3.12+: the frame an entry into the interpreter pushes; -1 none
  uint16_t frame_basic_size;   // PyFrame_Type.tp_basicsize (3.9/3.10), checked at start

  // PyCodeObject.
  uint16_t code_basic_size;    // PyCode_Type.tp_basicsize, checked at start
  uint16_t code_first_line;    // int co_firstlineno
  uint16_t code_filename;      // str co_filename
  uint16_t code_function;      // str co_qualname (3.11+), co_name before
  uint16_t code_line_table;    // bytes co_lnotab (3.9) / co_linetable
  uint16_t code_bytes;         // bytes co_code (3.9/3.10)
  uint16_t code_units;         // co_code_adaptive[], the 2-byte code units (3.11+)
  uint16_t code_first_traceable;  // int _co_firsttraceable (3.11+)

  // Compact str objects: where the characters start.
  uint16_t unicode_ascii_data;    // sizeof(PyASCIIObject)
  uint16_t unicode_compact_data;  // sizeof(PyCompactUnicodeObject)
};

// 2-byte code units (instruction + argument) in every version here.
inline constexpr size_t kCodeUnitBytes = 2;

}  // namespace proflaunch::stacks
