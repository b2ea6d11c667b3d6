// The shim's only voice: single lines on stderr, written with write(2) so the
// program's stdio buffers are never touched. Warnings are for failures the user
// must know about (each kind at most once per process); the verbose line only
// appears when PROFLAUNCH_VERBOSE asks for it.
#pragma once

namespace proflaunch {

enum class Warning : unsigned {
  kConfig,
  kPartsDir,
  kOpenPart,
  kWriteFailed,
  kWriterThread,
  kOutOfMemory,
  kCorruptRing,
  kCount,
};

// Prints "proflaunch: <message>\n" unless this kind was already reported in
// this process. Async-signal-safe; never allocates; truncates long lines.
void warn_once(Warning kind, const char* message) noexcept;

// Joins up to four pieces into one warning line.
void warn_once(Warning kind, const char* a, const char* b, const char* c = nullptr,
               const char* d = nullptr) noexcept;

// Prints one "proflaunch: ..." line unconditionally (the caller checks verbose).
void print_line(const char* a, const char* b = nullptr, const char* c = nullptr,
                const char* d = nullptr) noexcept;

}  // namespace proflaunch
