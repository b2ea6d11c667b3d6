// What the OS runtime tests read from a trace: every BlockingCall with its
// call name, thread, object, and the stack that follows it (native frames
// named by the launcher's embedded symbol table, Python frames by their
// strings). Built with the formats reader, independent of proftrace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/records.h"

namespace proflaunch::e2e {

struct PythonFrameText {
  std::string file;
  std::string function;
  int32_t line = 0;
};

struct BlockingWait {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string api;
  uint8_t api_domain = 0;
  format::BlockingCallRecord record{};
  bool has_stack = false;
  // Per native frame (innermost first), its functions by inline depth: the
  // innermost inlined function first, the function the frame belongs to last.
  std::vector<std::vector<std::string>> native_frames;
  std::vector<PythonFrameText> python_frames;  // innermost first

  uint64_t duration_ns() const { return record.span.end_ns - record.span.begin_ns; }
  format::WaitObjectKind kind() const { return static_cast<format::WaitObjectKind>(record.object_kind); }
  bool in_native_function(const std::string& name) const;
  bool in_python_function(const std::string& name) const;
  std::string describe() const;
};

struct OsrtTrace {
  std::vector<BlockingWait> waits;  // in file order
  uint32_t main_pid = 0;            // the traced program (its parent was not traced)
  uint64_t stack_records = 0;
};

// Reads `path`; on failure `error` says why.
OsrtTrace load_osrt_trace(const std::string& path, std::string* error);

}  // namespace proflaunch::e2e
