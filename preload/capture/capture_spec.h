// What to record and when: the capture options of proflaunch (--capture-range,
// --capture-range-repeat, --delay, --duration, --steps, --step-range), as
// the launcher passes them on (PROFLAUNCH_CAPTURE_*, the user's own text;
// their rows are in preload/settings.h).
// One parser, shared by the launcher (which rejects bad input before the
// program starts) and the shim (which re-reads the same text). No
// allocation: the shim parses in its constructor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch {

// What opens and closes capture windows.
enum class CaptureMode : uint8_t {
  kAlways,      // no capture option: one window, the whole run (no window records)
  kTimed,       // --delay and/or --duration only
  kProfilerApi, // --capture-range=cudaProfilerApi
  kNvtxRange,   // --capture-range=nvtx:NAME[@DOMAIN]
  kSteps,       // --steps with --step-range
  kIdle,        // proflaunch --idle: windows only on request (proflaunch ctl)
};

// What one step is (--step-range).
enum class StepSource : uint8_t {
  kNone,
  kNvtx,    // NAME[@DOMAIN]: one occurrence of an NVTX range
  kKernel,  // kernel:NAME: from one launch of the kernel to the next
};

inline constexpr size_t kMaxCaptureNameBytes = 256;
// --ring-size: compressed records kept in memory (about 10 s of a busy
// training loop at ~15 bytes per record; the bound wins over the duration).
inline constexpr uint64_t kDefaultRingBytes = uint64_t{256} << 20;
inline constexpr uint64_t kMinRingBytes = uint64_t{4} << 20;

struct CaptureSpec {
  CaptureMode mode = CaptureMode::kAlways;
  StepSource step_source = StepSource::kNone;
  // The NVTX range (capture range or step) or the kernel of a step.
  char name[kMaxCaptureNameBytes] = {};
  // The NVTX domain; empty: the default domain (nvtxRangePush and friends).
  char domain[kMaxCaptureNameBytes] = {};
  // --capture-range-repeat: windows to capture; 0 = every one.
  uint32_t repeat = 1;
  uint64_t delay_ns = 0;     // nothing opens before this (from the process's start)
  uint64_t duration_ns = 0;  // each window closes at most this long after it opened; 0 = no limit
  // --steps=WAIT:WARMUP:ACTIVE[:REPEAT], as torch.profiler.schedule: cycles of
  // wait + warmup + active steps, recording the active ones; `cycles` 0 =
  // cycle until the program ends.
  uint32_t wait = 0;
  uint32_t warmup = 0;
  uint32_t active = 0;
  uint32_t cycles = 0;
  // --ring=DURATION (flight recorder): record the whole run but keep only
  // the last `ring_ns` of records in memory, within `ring_bytes` of
  // compressed chunks; write them out on a crash, the first out-of-memory,
  // a sticky device error, a request, and (--ring-dump-at-exit) at exit.
  uint64_t ring_ns = 0;  // 0: streaming (every record reaches the file)
  uint64_t ring_bytes = kDefaultRingBytes;
  bool ring_dump_at_exit = false;

  bool operator==(const CaptureSpec&) const = default;  // for tests
};

// The value parsers the options share (the settings in config.cpp use them
// too; defined here so that capture/ needs nothing from above it).
// "30s", "500ms", "2m", "1h", "1.5s", "250us"; a bare number is seconds.
bool parse_duration(const char* text, uint64_t& ns);
// "8M", "65536", "1g", "512k", "8MiB"; false on anything else.
bool parse_byte_size(const char* text, size_t& bytes);

// The option texts as the user gave them (nullptr: not given). Fills `spec`
// and returns true, or returns false with `error` naming the option and
// what is wrong (NUL-terminated, cut to `error_bytes`).
struct CaptureOptions {
  const char* capture_range = nullptr;
  const char* capture_range_repeat = nullptr;
  const char* delay = nullptr;
  const char* duration = nullptr;
  const char* steps = nullptr;
  const char* step_range = nullptr;
  bool idle = false;
  const char* ring = nullptr;
  const char* ring_size = nullptr;
  bool ring_dump_at_exit = false;
};
bool parse_capture_options(const CaptureOptions& options, CaptureSpec& spec, char* error, size_t error_bytes);

// "cudaProfilerApi", "nvtx:step@train", "steps 0:1:2:0 of kernel:k" ... for messages.
const char* capture_mode_name(CaptureMode mode);

}  // namespace proflaunch
