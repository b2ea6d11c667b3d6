// The shim's configuration: one struct, filled once at load from PROFLAUNCH_*
// variables (the launcher sets them). Each setting is a row of the table in
// settings.h: its variable, default and parser. A bad value never stops the
// program: it yields one warning and the default.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/capture/capture_spec.h"
#include "preload/settings.h"

namespace proflaunch {

// Trace domains (PROFLAUNCH_TRACE). The hooks consult these; the core only
// carries them.
enum TraceDomain : uint32_t {
  kTraceCuda = 1u << 0,    // driver and runtime API calls, launches, copies, syncs
  kTraceMemory = 1u << 1,  // allocations
  kTraceNccl = 1u << 2,
  kTraceNvtx = 1u << 3,
  kTraceAll = kTraceCuda | kTraceMemory | kTraceNccl | kTraceNvtx,
};

// --gpu-timing: auto picks CUPTI when it can subscribe, otherwise events.
enum class GpuTiming : uint8_t { kEvents, kNone, kCupti, kAuto };

// Where call stacks are taken (PROFLAUNCH_STACKS). Bit n is
// format::StackPoint n, so a hook tests `points >> point & 1`.
enum StackPointBits : uint32_t {
  kStacksLaunch = 1u << 1,  // GPU work submitted: launches, copies, memsets
  kStacksMemory = 1u << 2,  // allocations and frees
  kStacksSync = 1u << 3,    // synchronization
  kStacksBlocking = 1u << 4,  // libc calls that blocked (--osrt-threshold)
  kStacksAll = kStacksLaunch | kStacksMemory | kStacksSync | kStacksBlocking,
};

// Defaults in the units the code uses; tests/unit/settings checks that they
// are the table's defaults. Limits: settings.h. Why these values: config.cpp.
inline constexpr size_t kDefaultBufferBytes = size_t{8} << 20;
inline constexpr size_t kMinBufferBytes = size_t{64} << 10;
inline constexpr size_t kMaxBufferBytes = size_t{1} << 30;
inline constexpr uint32_t kDefaultFlushIntervalMs = 100;
inline constexpr uint32_t kDefaultStackDepth = 32;
inline constexpr uint32_t kDefaultCpuSamplingHz = 1000;
inline constexpr uint64_t kDefaultOsrtThresholdNs = 20000;
inline constexpr uint64_t kOsrtOff = UINT64_MAX;  // --osrt-threshold=off
inline constexpr uint32_t kDefaultGpuMetricsHz = 10;
inline constexpr size_t kMaxGpuMetricsCountersBytes = 1024;

inline constexpr size_t kMaxPathBytes = 4096;
inline constexpr size_t kMaxCountedCallsBytes = 4096;

struct Config {
  // Where each process writes <pid>-<section>.part. Empty: the shim does not
  // record (it was preloaded without the launcher).
  char parts_dir[kMaxPathBytes] = {};
  size_t buffer_bytes_per_thread = kDefaultBufferBytes;  // power of two
  uint32_t flush_interval_ms = kDefaultFlushIntervalMs;  // a SIGKILL loses at most this much
  GpuTiming gpu_timing = GpuTiming::kAuto;
  uint32_t trace_domains = kTraceAll;
  bool verbose = false;
  uint32_t stack_points = kStacksAll;  // StackPointBits
  uint32_t stack_depth = kDefaultStackDepth;  // native (and Python) frames kept per stack
  // Which calls are counted rather than recorded one by one (PROFLAUNCH_COUNTED),
  // as given: checked against the hook tables when the hooks start.
  char counted_calls[kMaxCountedCallsBytes] = "default";
  // Samples per second of each thread's CPU time; 0: off (--cpu-sampling).
  uint32_t cpu_sampling_hz = kDefaultCpuSamplingHz;
  // Blocking libc calls shorter than this are not recorded; kOsrtOff: the
  // OS runtime hooks record nothing (--osrt-threshold).
  uint64_t osrt_threshold_ns = kDefaultOsrtThresholdNs;
  // Device metrics (NVML, ROCm SMI) per second; 0: off (--gpu-metrics).
  uint32_t gpu_metrics_hz = kDefaultGpuMetricsHz;
  // CUPTI PM sampling counters: empty = off, "DEFAULT" or a comma list
  // (--gpu-metrics-counters).
  char gpu_metrics_counters[kMaxGpuMetricsCountersBytes] = {};
  // Set by a traced process's exec hook for the image it execs:
  // "<pid>:<section id hex>". Tells the new image which section it continues.
  uint32_t exec_parent_pid = 0;
  uint64_t exec_parent_section = 0;
  // Rank variables, for ProcessInfo (-1 when unset).
  int32_t rank = -1;
  int32_t local_rank = -1;
  int32_t world_size = -1;
  // When to record (PROFLAUNCH_CAPTURE_*, PROFLAUNCH_DELAY, ...): capture_spec.h.
  CaptureSpec capture;

  bool operator==(const Config&) const = default;  // for tests
};

// Whether TSAN_OPTIONS text lets a fork child of a multi-threaded process
// start threads (die_after_fork=0 or =false; the last setting wins, as for
// TSan's own parser). Set by the launcher for TSan-built programs.
bool tsan_allows_threads_after_fork(const char* options) noexcept;

// The variables code outside the table names (settings.h declares them all).
inline constexpr const char* kEnvPartsDir = setting_row(Setting::kPartsDir).env;
inline constexpr const char* kEnvExecParent = setting_row(Setting::kExecParent).env;
inline constexpr const char* kEnvStacks = setting_row(Setting::kStacks).env;
inline constexpr const char* kEnvStackDepth = setting_row(Setting::kStackDepth).env;
// Names the capture options' variables in a warning: they are checked
// together, and the problem names the option.
inline constexpr const char* kEnvCaptureOptions = "PROFLAUNCH_CAPTURE_*";

// Looks a variable up; nullptr when unset. Lets tests parse without touching
// the real environment.
using GetEnvFn = const char* (*)(const char* name, void* context);

// Reports one problem with one variable (the caller turns it into a warning).
using ConfigWarningFn = void (*)(const char* variable, const char* value, const char* problem,
                                 void* context);

// Fills `config` from the variables: each row of the settings table with a
// reader, in table order, then the capture options together. Never fails:
// bad values warn and keep the default. No allocation, so it can run in a
// constructor before malloc hooks of other tools are ready.
void parse_config(Config& config, GetEnvFn getenv_fn, void* getenv_context,
                  ConfigWarningFn warn, void* warn_context);

// Parsers shared with the launcher and tests. Return false on bad input.
// (parse_byte_size and parse_duration: capture/capture_spec.h.)
bool parse_trace_domains(const char* text, uint32_t& domains);  // "cuda,nvtx", "all"
bool parse_gpu_timing(const char* text, GpuTiming& timing);     // "auto" | "cupti" | "events" | "none"
bool parse_stack_points(const char* text, uint32_t& points);    // "none", "all", "launch,sync"
bool parse_rate_hz(const char* text, uint32_t max_hz, uint32_t& hz);  // "1000", "off" (0)
bool parse_osrt_threshold(const char* text, uint64_t& ns);      // "20us", "0", "off" (kOsrtOff)
const char* trace_domain_name(TraceDomain domain);

// PROFLAUNCH_COUNTED: a comma list applied in order. `default` starts from
// the hook tables' list of counted calls, `none` from no counted call (every
// call recorded); `NAME` counts that API too, `-NAME` records it in full.
// Calls `item(name, counted, context)` for each API item; false when the
// syntax is wrong. `default` / `none` come as name "default" / "none".
using CountedItemFn = void (*)(const char* name, size_t length, bool counted, void* context);
bool parse_counted_calls(const char* text, CountedItemFn item, void* context);

}  // namespace proflaunch
