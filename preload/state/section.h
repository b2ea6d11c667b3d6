// A section is one process image's part of the trace: it starts when the shim
// starts in a process (at load, in a fork child, in an exec'd image) and ends
// at exit or exec. Its id is random so that sections from many hosts and
// restarts never collide.
#pragma once

#include <cstdint>

namespace proflaunch {

struct SectionIdentity {
  uint64_t id = 0;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t flags = 0;  // format::ProcessFlags
  uint64_t parent_section = 0;
  // Taken back to back when the section starts.
  uint64_t monotonic_ns = 0;
  uint64_t realtime_ns = 0;
  uint64_t boottime_ns = 0;
};

// A fresh identity for the calling process. Async-signal-safe enough for a
// fork child handler (getrandom, getpid, clock_gettime; no allocation).
SectionIdentity make_section_identity(uint32_t flags, uint64_t parent_section) noexcept;

// "<pid>:<16 hex digits>", the value of PROFLAUNCH_EXEC_PARENT. `out` holds 32 bytes.
void format_exec_parent(const SectionIdentity& section, char* out) noexcept;

// Writes `value` as 16 lowercase hex digits and a NUL (17 bytes).
void format_hex64(uint64_t value, char* out) noexcept;

}  // namespace proflaunch
