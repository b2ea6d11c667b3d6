// `proftrace dump` fields of the stack records (formats/README.md, "Call
// stacks"): " name=value" pairs appended to the record's line, the frames of
// a stack definition included.
#pragma once

#include <string>

#include "formats/reader.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

// For CallStack, NativeStackDef, PythonStackDef, ModuleDef and SymbolDef.
void append_stack_record_fields(std::string& line, const format::RecordView& record,
                                const SectionModel* section);

// True for records with a variable tail that dump does not call extra bytes.
bool has_stack_tail(uint16_t kind);

}  // namespace proflaunch::tools
