// preload/stacks/python_layout_39.h against the CPython 3.9 headers.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>

#include "preload/stacks/python_layout_39.h"
#include "tests/unit/stacks/python_layout_checks.h"

namespace proflaunch::stacks {
namespace {

static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 9, "compile with the 3.9 headers");
const PythonLayout& layout = py39::kLayout;

TEST(PythonLayout39, MatchesTheHeaders) {
  expect_layout_of_these_headers(layout);
  EXPECT_EQ(layout.chain, FrameChain::kFrameObjects);
  EXPECT_EQ(layout.line_table, LineTable::kLnotab);
  EXPECT_EQ(layout.thread_state_frame, offsetof(PyThreadState, frame));
  EXPECT_EQ(layout.cframe_current_frame, kAbsent);
  EXPECT_EQ(layout.frame_code, offsetof(PyFrameObject, f_code));
  EXPECT_EQ(layout.frame_previous, offsetof(PyFrameObject, f_back));
  EXPECT_EQ(layout.frame_instruction, offsetof(PyFrameObject, f_lasti));
  EXPECT_EQ(sizeof(PyFrameObject::f_lasti), sizeof(int32_t));
  // Not in the headers: that f_lasti counts bytes in 3.9 and code units in
  // 3.10 is checked by the lines tests/e2e/stacks see.
  EXPECT_TRUE(layout.lasti_in_bytes);
  EXPECT_EQ(layout.frame_basic_size, sizeof(PyFrameObject));  // PyFrame_Type's tp_basicsize
  EXPECT_EQ(layout.code_basic_size, sizeof(PyCodeObject));   // PyCode_Type's
  EXPECT_EQ(layout.code_function, offsetof(PyCodeObject, co_name));
  EXPECT_EQ(layout.code_line_table, offsetof(PyCodeObject, co_lnotab));
  EXPECT_EQ(layout.code_bytes, offsetof(PyCodeObject, co_code));
}

TEST(PythonLayout39, UnicodeStateBits) { expect_unicode_state_bits(); }

}  // namespace
}  // namespace proflaunch::stacks
