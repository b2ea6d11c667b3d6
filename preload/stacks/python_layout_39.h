// CPython 3.9 (python_layout.h). Checked against the 3.9 headers by
// tests/unit/stacks/python_layout_39_test.cpp.
#pragma once

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks::py39 {

inline constexpr PythonLayout kLayout{
    .major = 3,
    .minor = 9,
    .chain = FrameChain::kFrameObjects,
    .line_table = LineTable::kLnotab,
    .thread_state_frame = 24,  // PyFrameObject* frame
    .cframe_current_frame = kAbsent,
    .frame_code = 32,
    .frame_previous = 24,      // f_back
    .frame_instruction = 104,  // int f_lasti, in bytes
    .lasti_in_bytes = true,
    .frame_owner = kAbsent,
    .frame_is_entry = kAbsent,
    .owned_by_thread = -1,
    .owned_by_generator = -1,
    .owned_by_frame_object = -1,
    .owned_by_cstack = -1,
    .frame_basic_size = 368,
    .code_basic_size = 176,
    .code_first_line = 40,
    .code_filename = 104,
    .code_function = 112,  // co_name
    .code_line_table = 120,  // co_lnotab
    .code_bytes = 48,
    .code_units = kAbsent,
    .code_first_traceable = kAbsent,
    .unicode_ascii_data = 48,
    .unicode_compact_data = 72,
};

}  // namespace proflaunch::stacks::py39
