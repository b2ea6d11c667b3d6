// CPython 3.12 (python_layout.h). Checked against the 3.12 headers by
// tests/unit/stacks/python_layout_312_test.cpp.
#pragma once

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks::py312 {

inline constexpr PythonLayout kLayout{
    .major = 3,
    .minor = 12,
    .chain = FrameChain::kInterpreterFrames,
    .line_table = LineTable::kLocations,
    .thread_state_frame = 56,   // _PyCFrame* cframe
    .cframe_current_frame = 0,  // _PyInterpreterFrame* current_frame
    .frame_code = 0,
    .frame_previous = 8,
    .frame_instruction = 56,  // _Py_CODEUNIT* prev_instr
    .lasti_in_bytes = false,
    .frame_owner = 70,
    .frame_is_entry = kAbsent,  // an entry pushes an owned-by-C-stack frame
    .owned_by_thread = 0,
    .owned_by_generator = 1,
    .owned_by_frame_object = 2,
    .owned_by_cstack = 3,
    .frame_basic_size = kAbsent,
    .code_basic_size = 192,
    .code_first_line = 68,
    .code_filename = 112,
    .code_function = 128,  // co_qualname
    .code_line_table = 136,
    .code_bytes = kAbsent,
    .code_units = 192,
    .code_first_traceable = 176,
    .unicode_ascii_data = 40,
    .unicode_compact_data = 56,
};

}  // namespace proflaunch::stacks::py312
