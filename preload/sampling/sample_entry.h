// What the signal handler writes into a thread's sample buffer and the
// writer reads back (sample_buffer.h). Entries are 8-byte aligned; a stack
// seen for the first time by the thread carries its content, later ones only
// its hash (the writer maps hashes to the ids it defined).
#pragma once

#include <cstdint>

namespace proflaunch::sampling {

enum SampleEntryKind : uint16_t {
  kEntryPadding = 1,  // the rest of the buffer up to its end: skip
  kEntrySample = 2,
};

enum SampleEntryFlags : uint16_t {
  kHasNative = 1u << 0,
  kNativeContent = 1u << 1,  // native_count PCs follow the header
  kHasPython = 1u << 2,
  kPythonContent = 1u << 3,  // python_count PythonFrameEntry follow the PCs
  kNativeTruncated = 1u << 4,
  kPythonTruncated = 1u << 5,
  kLeafIsPc = 1u << 6,       // the first PC is the interrupted instruction + 1
  kInTracedCall = 1u << 7,   // the thread was inside one of the shim's hooks
};

struct SampleEntry {
  uint32_t bytes;  // the whole entry, a multiple of 8
  uint16_t kind;   // SampleEntryKind
  uint16_t flags;  // SampleEntryFlags
  uint32_t periods;
  uint16_t native_count;
  uint16_t python_count;
  uint64_t time_ns;        // CLOCK_MONOTONIC
  uint64_t thread_cpu_ns;  // CLOCK_THREAD_CPUTIME_ID
  uint64_t native_hash;
  uint64_t python_hash;
};
static_assert(sizeof(SampleEntry) == 48);

// One Python frame, resolved in the handler; file then function text follow
// (UTF-8, no terminator), the whole padded to 4 bytes.
struct PythonFrameEntry {
  int32_t line;
  uint32_t flags;  // format::PythonFrameFlags
  uint16_t file_bytes;
  uint16_t function_bytes;
};
static_assert(sizeof(PythonFrameEntry) == 12);

inline constexpr uint32_t kMaxFileTextBytes = 240;
inline constexpr uint32_t kMaxFunctionTextBytes = 120;

inline constexpr uint32_t align8(uint32_t bytes) { return (bytes + 7) & ~7u; }
inline constexpr uint32_t align4(uint32_t bytes) { return (bytes + 3) & ~3u; }

}  // namespace proflaunch::sampling
