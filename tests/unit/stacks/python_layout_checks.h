// Shared by the python_layout_3*_test.cpp files, each compiled with one
// CPython version's own headers (Py_BUILD_CORE, internal/ included where the
// frame structures live) and included after them: the checks whose field
// names are the same in every version. A wrong offset would make every
// Python frame garbage - or, for the checked pointers, make them silently
// disappear.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {

inline void expect_layout_of_these_headers(const PythonLayout& layout) {
  EXPECT_EQ(layout.major, PY_MAJOR_VERSION);
  EXPECT_EQ(layout.minor, PY_MINOR_VERSION);
  EXPECT_EQ(pyobject::kType, offsetof(PyObject, ob_type));
  EXPECT_EQ(pyobject::kVarSize, offsetof(PyVarObject, ob_size));
  EXPECT_EQ(pyobject::kTypeBasicSize, offsetof(PyTypeObject, tp_basicsize));
  EXPECT_EQ(pyobject::kBytesData, offsetof(PyBytesObject, ob_sval));
  EXPECT_EQ(pyobject::kUnicodeLength, offsetof(PyASCIIObject, length));
  EXPECT_EQ(pyobject::kUnicodeState, offsetof(PyASCIIObject, state));
  EXPECT_EQ(layout.code_first_line, offsetof(PyCodeObject, co_firstlineno));
  EXPECT_EQ(layout.code_filename, offsetof(PyCodeObject, co_filename));
  EXPECT_EQ(kCodeUnitBytes, sizeof(_Py_CODEUNIT));
  EXPECT_EQ(layout.unicode_ascii_data, sizeof(PyASCIIObject));
  EXPECT_EQ(layout.unicode_compact_data, sizeof(PyCompactUnicodeObject));
}

// The bit positions of PyASCIIObject.state that the shim decodes by hand.
inline void expect_unicode_state_bits() {
  PyASCIIObject object{};
  object.state.kind = PyUnicode_2BYTE_KIND;
  object.state.compact = 1;
  object.state.ascii = 0;
  uint32_t bits;
  std::memcpy(&bits, reinterpret_cast<const char*>(&object) + pyobject::kUnicodeState, sizeof bits);
  EXPECT_EQ(bits >> 2 & 7, static_cast<uint32_t>(PyUnicode_2BYTE_KIND));
  EXPECT_EQ(bits >> 5 & 1, 1u);
  EXPECT_EQ(bits >> 6 & 1, 0u);
  object.state.ascii = 1;
  object.state.kind = PyUnicode_4BYTE_KIND;
  std::memcpy(&bits, reinterpret_cast<const char*>(&object) + pyobject::kUnicodeState, sizeof bits);
  EXPECT_EQ(bits >> 6 & 1, 1u);
  EXPECT_EQ(bits >> 2 & 7, static_cast<uint32_t>(PyUnicode_4BYTE_KIND));
}

}  // namespace proflaunch::stacks
