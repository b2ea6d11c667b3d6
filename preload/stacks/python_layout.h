// Where CPython 3.11 keeps what a frame walk reads, on x86-64. These are
// facts about the interpreter's internal structures (Include/internal/
// pycore_frame.h, Include/cpython/code.h, pystate.h, unicodeobject.h), not
// part of its stable ABI: they hold for every 3.11.x release and for no
// other minor version. tests/unit/stacks/python_layout_test.cpp checks each
// against the installed 3.11 headers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch::stacks::py311 {

inline constexpr uint64_t kVersionMajorMinor = 0x030B;  // Py_Version >> 16

// PyObject / PyVarObject
inline constexpr size_t kObjectType = 8;   // ob_type
inline constexpr size_t kVarObjectSize = 16;  // ob_size

// PyThreadState -> _PyCFrame* cframe -> _PyInterpreterFrame* current_frame
inline constexpr size_t kThreadStateCFrame = 56;
inline constexpr size_t kCFrameCurrentFrame = 8;

// _PyInterpreterFrame
inline constexpr size_t kFrameCode = 32;       // PyCodeObject* f_code
inline constexpr size_t kFramePrevious = 48;   // _PyInterpreterFrame* previous
inline constexpr size_t kFramePrevInstr = 56;  // _Py_CODEUNIT* prev_instr
inline constexpr size_t kFrameIsEntry = 68;    // bool is_entry
inline constexpr size_t kFrameOwner = 69;      // char owner
inline constexpr char kFrameOwnedByThread = 0;
inline constexpr char kFrameOwnedByGenerator = 1;
inline constexpr char kFrameOwnedByFrameObject = 2;

// PyCodeObject (a PyVarObject: ob_size is the number of 2-byte code units)
inline constexpr size_t kCodeFirstLineNo = 72;       // int co_firstlineno
inline constexpr size_t kCodeFilename = 112;         // PyObject* co_filename (str)
inline constexpr size_t kCodeName = 120;             // PyObject* co_name (str)
inline constexpr size_t kCodeQualname = 128;         // PyObject* co_qualname (str)
inline constexpr size_t kCodeLinetable = 136;        // PyObject* co_linetable (bytes)
inline constexpr size_t kCodeFirstTraceable = 168;   // int _co_firsttraceable
inline constexpr size_t kCodeAdaptive = 184;         // char co_code_adaptive[]: the code units
inline constexpr size_t kCodeUnitBytes = 2;

// PyBytesObject
inline constexpr size_t kBytesData = 32;  // ob_sval

// PyASCIIObject / PyCompactUnicodeObject
inline constexpr size_t kUnicodeLength = 16;  // Py_ssize_t length (code points)
inline constexpr size_t kUnicodeState = 32;   // bit field: interned:2 kind:3 compact:1 ascii:1 ready:1
inline constexpr size_t kAsciiData = 48;      // sizeof(PyASCIIObject)
inline constexpr size_t kCompactData = 72;    // sizeof(PyCompactUnicodeObject)

}  // namespace proflaunch::stacks::py311
