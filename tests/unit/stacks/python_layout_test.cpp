// The CPython 3.11 structure offsets the shim reads frames with
// (preload/stacks/python_layout.h), checked against the installed 3.11
// headers. A wrong offset would make every Python frame garbage - or, for
// the checked pointers, make them silently disappear.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {
namespace {

namespace layout = py311;

TEST(PythonLayout, MatchesTheInstalledHeaders) {
  static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 11, "these are the 3.11 headers");
  EXPECT_EQ(layout::kVersionMajorMinor, uint64_t{PY_VERSION_HEX} >> 16);
  EXPECT_EQ(layout::kObjectType, offsetof(PyObject, ob_type));
  EXPECT_EQ(layout::kVarObjectSize, offsetof(PyVarObject, ob_size));
  EXPECT_EQ(layout::kThreadStateCFrame, offsetof(PyThreadState, cframe));
  EXPECT_EQ(layout::kCFrameCurrentFrame, offsetof(_PyCFrame, current_frame));
  EXPECT_EQ(layout::kFrameCode, offsetof(_PyInterpreterFrame, f_code));
  EXPECT_EQ(layout::kFramePrevious, offsetof(_PyInterpreterFrame, previous));
  EXPECT_EQ(layout::kFramePrevInstr, offsetof(_PyInterpreterFrame, prev_instr));
  EXPECT_EQ(layout::kFrameIsEntry, offsetof(_PyInterpreterFrame, is_entry));
  EXPECT_EQ(layout::kFrameOwner, offsetof(_PyInterpreterFrame, owner));
  EXPECT_EQ(layout::kFrameOwnedByThread, FRAME_OWNED_BY_THREAD);
  EXPECT_EQ(layout::kFrameOwnedByGenerator, FRAME_OWNED_BY_GENERATOR);
  EXPECT_EQ(layout::kFrameOwnedByFrameObject, FRAME_OWNED_BY_FRAME_OBJECT);
  EXPECT_EQ(layout::kCodeFirstLineNo, offsetof(PyCodeObject, co_firstlineno));
  EXPECT_EQ(layout::kCodeFilename, offsetof(PyCodeObject, co_filename));
  EXPECT_EQ(layout::kCodeName, offsetof(PyCodeObject, co_name));
  EXPECT_EQ(layout::kCodeQualname, offsetof(PyCodeObject, co_qualname));
  EXPECT_EQ(layout::kCodeLinetable, offsetof(PyCodeObject, co_linetable));
  EXPECT_EQ(layout::kCodeFirstTraceable, offsetof(PyCodeObject, _co_firsttraceable));
  EXPECT_EQ(layout::kCodeAdaptive, offsetof(PyCodeObject, co_code_adaptive));
  EXPECT_EQ(layout::kCodeUnitBytes, sizeof(_Py_CODEUNIT));
  EXPECT_EQ(layout::kBytesData, offsetof(PyBytesObject, ob_sval));
  EXPECT_EQ(layout::kUnicodeLength, offsetof(PyASCIIObject, length));
  EXPECT_EQ(layout::kUnicodeState, offsetof(PyASCIIObject, state));
  EXPECT_EQ(layout::kAsciiData, sizeof(PyASCIIObject));
  EXPECT_EQ(layout::kCompactData, sizeof(PyCompactUnicodeObject));
}

// The bit positions of PyASCIIObject.state that the shim decodes by hand.
TEST(PythonLayout, UnicodeStateBits) {
  PyASCIIObject object{};
  object.state.kind = PyUnicode_2BYTE_KIND;
  object.state.compact = 1;
  object.state.ascii = 0;
  uint32_t bits;
  std::memcpy(&bits, reinterpret_cast<const char*>(&object) + layout::kUnicodeState, sizeof bits);
  EXPECT_EQ(bits >> 2 & 7, static_cast<uint32_t>(PyUnicode_2BYTE_KIND));
  EXPECT_EQ(bits >> 5 & 1, 1u);
  EXPECT_EQ(bits >> 6 & 1, 0u);
  object.state.ascii = 1;
  std::memcpy(&bits, reinterpret_cast<const char*>(&object) + layout::kUnicodeState, sizeof bits);
  EXPECT_EQ(bits >> 6 & 1, 1u);
}

}  // namespace
}  // namespace proflaunch::stacks
