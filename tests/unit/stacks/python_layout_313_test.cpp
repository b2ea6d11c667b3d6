// preload/stacks/python_layout_313.h against the CPython 3.13 headers.
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>

#include "preload/stacks/python_layout_313.h"
#include "tests/unit/stacks/python_layout_checks.h"

namespace proflaunch::stacks {
namespace {

static_assert(PY_MAJOR_VERSION == 3 && PY_MINOR_VERSION == 13, "compile with the 3.13 headers");
const PythonLayout& layout = py313::kLayout;

TEST(PythonLayout313, MatchesTheHeaders) {
  expect_layout_of_these_headers(layout);
  EXPECT_EQ(layout.chain, FrameChain::kInterpreterFrames);
  EXPECT_EQ(layout.line_table, LineTable::kLocations);
  EXPECT_EQ(layout.thread_state_frame, offsetof(PyThreadState, current_frame));
  EXPECT_EQ(layout.cframe_current_frame, kAbsent);  // no _PyCFrame any more
  EXPECT_EQ(layout.frame_code, offsetof(_PyInterpreterFrame, f_executable));
  EXPECT_EQ(layout.frame_previous, offsetof(_PyInterpreterFrame, previous));
  EXPECT_EQ(layout.frame_instruction, offsetof(_PyInterpreterFrame, instr_ptr));
  EXPECT_EQ(layout.frame_owner, offsetof(_PyInterpreterFrame, owner));
  EXPECT_EQ(sizeof(_PyInterpreterFrame::owner), 1u);
  EXPECT_EQ(layout.frame_is_entry, kAbsent);  // an entry pushes a frame owned by the C stack
  EXPECT_EQ(layout.owned_by_thread, FRAME_OWNED_BY_THREAD);
  EXPECT_EQ(layout.owned_by_generator, FRAME_OWNED_BY_GENERATOR);
  EXPECT_EQ(layout.owned_by_frame_object, FRAME_OWNED_BY_FRAME_OBJECT);
  EXPECT_EQ(layout.owned_by_cstack, FRAME_OWNED_BY_CSTACK);
  EXPECT_EQ(layout.frame_basic_size, kAbsent);
  // PyCode_Type's tp_basicsize: the code units follow the fixed part.
  EXPECT_EQ(layout.code_basic_size, offsetof(PyCodeObject, co_code_adaptive));
  EXPECT_EQ(layout.code_function, offsetof(PyCodeObject, co_qualname));
  EXPECT_EQ(layout.code_line_table, offsetof(PyCodeObject, co_linetable));
  EXPECT_EQ(layout.code_bytes, kAbsent);
  EXPECT_EQ(layout.code_units, offsetof(PyCodeObject, co_code_adaptive));
  EXPECT_EQ(layout.code_first_traceable, offsetof(PyCodeObject, _co_firsttraceable));
}

TEST(PythonLayout313, UnicodeStateBits) { expect_unicode_state_bits(); }

}  // namespace
}  // namespace proflaunch::stacks
