// What a blocking call (BlockingCall, formats/README.md "What the CPU was
// doing") waited on, as every output names it: "read (pipe fd 5)",
// "pthread_mutex_lock (mutex 0x55d0c0a8)", "nanosleep".
#pragma once

#include <cstdint>
#include <string>

#include "formats/records.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::interpret {

// "pipe", "socket", "mutex"...; "sleep" for kNone; "object#N" when unknown.
std::string wait_object_kind_name(uint8_t kind);

// The object with its number: "pipe fd 5", "mutex 0x7f3a10", "child pid 41",
// "" for a sleep.
std::string wait_object_text(const format::BlockingCallRecord& call);

// The call's name (its ApiDef) and what it waited on: "read (pipe fd 5)".
std::string blocking_call_label(const SectionModel* section, const format::BlockingCallRecord& call);

// The call's name alone ("api#N" without definitions).
std::string blocking_call_name(const SectionModel* section, const format::BlockingCallRecord& call);

}  // namespace proflaunch::tools::interpret
