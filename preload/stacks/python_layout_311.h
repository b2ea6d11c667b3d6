// CPython 3.11 (python_layout.h). Checked against the 3.11 headers by
// tests/unit/stacks/python_layout_311_test.cpp.
#pragma once

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks::py311 {

inline constexpr PythonLayout kLayout{
    .major = 3,
    .minor = 11,
    .chain = FrameChain::kInterpreterFrames,
    .line_table = LineTable::kLocations,
    .thread_state_frame = 56,   // _PyCFrame* cframe
    .cframe_current_frame = 8,  // _PyInterpreterFrame* current_frame
    .frame_code = 32,
    .frame_previous = 48,
    .frame_instruction = 56,  // _Py_CODEUNIT* prev_instr
    .lasti_in_bytes = false,
    .frame_owner = 69,
    .frame_is_entry = 68,
    .owned_by_thread = 0,
    .owned_by_generator = 1,
    .owned_by_frame_object = 2,
    .owned_by_cstack = -1,
    .frame_basic_size = kAbsent,
    .code_basic_size = 184,
    .code_first_line = 72,
    .code_filename = 112,
    .code_function = 128,  // co_qualname
    .code_line_table = 136,
    .code_bytes = kAbsent,
    .code_units = 184,
    .code_first_traceable = 168,
    .unicode_ascii_data = 48,
    .unicode_compact_data = 72,
};

}  // namespace proflaunch::stacks::py311
