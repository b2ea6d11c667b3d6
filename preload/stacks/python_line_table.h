// The source line of an instruction, from a code object's line table: three
// formats, one per era of CPython (python_layout.h, LineTable). Pure
// functions over the table's bytes, so that tests/unit/stacks can check them
// against each interpreter's own answer for every instruction.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/stacks/python_layout.h"

namespace proflaunch::stacks {

// The line of the instruction at code unit `unit` (2-byte units) of a code
// object whose first line is `first_line`; -1 where the table gives the
// instruction no line, or the table is malformed.
int32_t line_of_code_unit(LineTable format, const uint8_t* table, size_t table_bytes,
                          int32_t first_line, int64_t unit);

}  // namespace proflaunch::stacks
