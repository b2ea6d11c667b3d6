// CPython 3.13, default (GIL) build (python_layout.h). Checked against the
// 3.13 headers by tests/unit/stacks/python_layout_313_test.cpp.
#pragma once

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks::py313 {

inline constexpr PythonLayout kLayout{
    .major = 3,
    .minor = 13,
    .chain = FrameChain::kInterpreterFrames,
    .line_table = LineTable::kLocations,
    .thread_state_frame = 72,  // _PyInterpreterFrame* current_frame
    .cframe_current_frame = kAbsent,
    .frame_code = 0,          // f_executable: a code object, None in entry frames
    .frame_previous = 8,
    .frame_instruction = 56,  // _Py_CODEUNIT* instr_ptr
    .lasti_in_bytes = false,
    .frame_owner = 70,
    .frame_is_entry = kAbsent,  // an entry pushes an owned-by-C-stack frame
    .owned_by_thread = 0,
    .owned_by_generator = 1,
    .owned_by_frame_object = 2,
    .owned_by_cstack = 3,
    .frame_basic_size = kAbsent,
    .code_basic_size = 200,
    .code_first_line = 68,
    .code_filename = 112,
    .code_function = 128,  // co_qualname
    .code_line_table = 136,
    .code_bytes = kAbsent,
    .code_units = 200,
    .code_first_traceable = 184,
    .unicode_ascii_data = 40,
    .unicode_compact_data = 56,
};

}  // namespace proflaunch::stacks::py313
