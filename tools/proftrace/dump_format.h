// One line of text per record for `proftrace dump`: kind, section, pid,
// tid, then every field as name=value, with names resolved from the
// definitions where that is cheap.
#pragma once

#include <string>

#include "formats/reader.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

// Appends the line (without newline) to `line`. `section` may be null.
void format_record(std::string& line, const format::RecordView& record, const SectionModel* section);

}  // namespace proflaunch::tools
