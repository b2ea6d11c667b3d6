// Every setting of proflaunch, declared once: one row each, with its option,
// value syntax, default, environment variable, parser and help line.
//
// From this table come the launcher's options and `--help` (launcher/
// settings_cli.h), the environment it passes to the program, the shim's
// parse_config (config.cpp), and the options tables of README.md and
// preload/README.md (`proflaunch --help-markdown=...`, checked by
// tests/unit/settings). A row with an environment variable and a reader is
// read by the shim; a row without one is the launcher's alone.
//
// Plain constexpr data: the shim walks it in its constructor, so nothing
// here allocates or throws.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/capture/capture_spec.h"

namespace proflaunch {

struct Config;

// One enumerator per row of kSettingRows, in the same order (checked below).
enum class Setting : uint8_t {
  kPartsDir,
  kOutput,
  kForce,
  kGpuTiming,
  kTrace,
  kBufferSize,
  kFlushInterval,
  kStacks,
  kCountCalls,
  kStackDepth,
  kNoSymbols,
  kCpuSampling,
  kOsrtThreshold,
  kGpuMetrics,
  kGpuMetricsCounters,
  kCaptureRange,
  kCaptureRangeRepeat,
  kDelay,
  kDuration,
  kSteps,
  kStepRange,
  kIdle,
  kRing,
  kRingSize,
  kRingDumpAtExit,
  kWaitAfterExit,
  kVerbose,
  kQuiet,
  kJoin,
  kExecParent,
  kCount,
};
inline constexpr size_t kSettingCount = static_cast<size_t>(Setting::kCount);
inline constexpr Setting kNoSetting = Setting::kCount;

enum class SettingValue : uint8_t {
  kFlag,    // no value: given or not; passed on as "1"
  kText,    // checked by the row's `check` (or, for the capture options, together)
  kNumber,  // an unsigned number in min..max
  kChoice,  // one of the words of `syntax`, separated by '|'
};

// Where the shim stores what it reads. The capture options are kept as text
// and parsed together (capture_spec.h) once every row was read.
struct SettingTarget {
  Config& config;
  CaptureOptions& capture;
};

// The shim's parser of a row: stores the value, or returns the problem (a
// static string, with what the shim does instead) and leaves the default.
using SettingReader = const char* (*)(const char* text, SettingTarget& target);

// The launcher's check of a kText option: false with `problem` filled in
// (NUL-terminated, cut to `problem_bytes`) when the text is refused.
using SettingCheck = bool (*)(const char* text, char* problem, size_t problem_bytes);

struct SettingGroup {
  const char* name;
  const char* description;
};
inline constexpr SettingGroup kCaptureGroup = {"Capture windows",
                                               "record only part of the run (default: all of it)"};
inline constexpr SettingGroup kRingGroup = {"Flight recorder",
                                            "keep only the end of the run, written out when it matters"};

struct SettingRow {
  Setting id;
  // The option, as CLI11 spells it ("-o,--output"); nullptr: not an option
  // (set by the launcher or by the shim itself).
  const char* flags = nullptr;
  SettingValue value = SettingValue::kFlag;
  // What the value looks like, for --help and the README ("SIZE", or the
  // choices of a kChoice row).
  const char* syntax = nullptr;
  // Used when the setting is not given; nullptr: none (not given, not used).
  const char* default_text = nullptr;
  uint32_t min = 0;  // kNumber
  uint32_t max = 0;
  SettingCheck check = nullptr;  // kText, by the launcher
  // The variable the launcher exports the value in (or unsets when not
  // given); nullptr: the launcher keeps the setting to itself.
  const char* env = nullptr;
  SettingReader read = nullptr;  // the shim's parser; nullptr: the shim does not read it
  Setting needs = kNoSetting;    // an option that must be given with this one
  // A valid value other than the default: the tests pass it from the command
  // line through the environment into the shim's Config.
  const char* example = nullptr;
  const SettingGroup* group = nullptr;  // --help section; nullptr: the main one
  const char* help = nullptr;
};

// The capture options are only collected as text: parse_capture_options
// checks them together once every row was read.
template <const char* CaptureOptions::*option>
const char* read_capture_text(const char* text, SettingTarget& target) {
  target.capture.*option = text;
  return nullptr;
}

// The shim's other readers (config.cpp).
const char* read_parts_dir(const char* text, SettingTarget& target);
const char* read_gpu_timing(const char* text, SettingTarget& target);
const char* read_trace(const char* text, SettingTarget& target);
const char* read_buffer_size(const char* text, SettingTarget& target);
const char* read_flush_interval(const char* text, SettingTarget& target);
const char* read_stacks(const char* text, SettingTarget& target);
const char* read_counted_calls(const char* text, SettingTarget& target);
const char* read_stack_depth(const char* text, SettingTarget& target);
const char* read_cpu_sampling(const char* text, SettingTarget& target);
const char* read_osrt_threshold(const char* text, SettingTarget& target);
const char* read_gpu_metrics(const char* text, SettingTarget& target);
const char* read_gpu_metrics_counters(const char* text, SettingTarget& target);
const char* read_idle(const char* text, SettingTarget& target);
const char* read_ring_dump_at_exit(const char* text, SettingTarget& target);
const char* read_verbose(const char* text, SettingTarget& target);
const char* read_exec_parent(const char* text, SettingTarget& target);

// The launcher's checks (config.cpp).
bool check_trace_domains(const char* text, char* problem, size_t problem_bytes);
bool check_buffer_size(const char* text, char* problem, size_t problem_bytes);
bool check_stack_points(const char* text, char* problem, size_t problem_bytes);
bool check_counted_calls(const char* text, char* problem, size_t problem_bytes);
bool check_cpu_sampling(const char* text, char* problem, size_t problem_bytes);
bool check_osrt_threshold(const char* text, char* problem, size_t problem_bytes);
bool check_gpu_metrics(const char* text, char* problem, size_t problem_bytes);
bool check_gpu_metrics_counters(const char* text, char* problem, size_t problem_bytes);

// Limits the table and the code share (config.cpp explains the choices).
inline constexpr uint32_t kMaxFlushIntervalMs = 200;
inline constexpr uint32_t kMaxStackDepth = 128;
inline constexpr uint32_t kMaxCpuSamplingHz = 10000;
inline constexpr uint32_t kMaxGpuMetricsHz = 1000;

inline constexpr SettingRow kSettingRows[] = {
    {.id = Setting::kPartsDir,
     .value = SettingValue::kText,
     .syntax = "DIR",
     .env = "PROFLAUNCH_PARTS_DIR",
     .read = read_parts_dir,
     .example = "/tmp/run.trace.parts",
     .help = "set by the launcher: the absolute directory (OUT.parts) where each process writes its part; "
             "unset: the shim does not record"},
    {.id = Setting::kOutput,
     .flags = "-o,--output",
     .value = SettingValue::kText,
     .syntax = "PATTERN",
     .default_text = "proflaunch-%p.trace",
     .example = "run.trace",
     .help = "the trace file; %p the program's pid, %h host, %q{VAR} an environment variable (an error if "
             "unset), %n the first counter that makes the name unique, %% a percent sign"},
    {.id = Setting::kForce,
     .flags = "--force",
     .help = "overwrite an existing trace (or stale parts); otherwise refused"},
    {.id = Setting::kGpuTiming,
     .flags = "--gpu-timing",
     .value = SettingValue::kChoice,
     .syntax = "auto|cupti|events|none",
     .default_text = "auto",
     .env = "PROFLAUNCH_GPU_TIMING",
     .read = read_gpu_timing,
     .example = "events",
     .help = "how GPU work is timed: cupti (the vendor's activity records), events (driver events around each "
             "operation), none, or auto (CUPTI when it can be used, otherwise events, saying why on stderr and "
             "in `proftrace info`)"},
    {.id = Setting::kTrace,
     .flags = "--trace",
     .value = SettingValue::kText,
     .syntax = "LIST",
     .default_text = "all",
     .check = check_trace_domains,
     .env = "PROFLAUNCH_TRACE",
     .read = read_trace,
     .example = "cuda,nvtx",
     .help = "what to record: a comma list of cuda, memory, nccl, nvtx, or all (nvtx: the launcher sets "
             "NVTX_INJECTION64_PATH to the shim, unless the program names its own NVTX tool, which it keeps, "
             "saying so)"},
    {.id = Setting::kBufferSize,
     .flags = "--buffer-size",
     .value = SettingValue::kText,
     .syntax = "SIZE",
     .default_text = "8M",
     .check = check_buffer_size,
     .env = "PROFLAUNCH_BUFFER_SIZE",
     .read = read_buffer_size,
     .example = "1M",
     .help = "record buffer per thread, 64K to 1G (rounded up to a power of two); records beyond it are "
             "counted as dropped"},
    {.id = Setting::kFlushInterval,
     .flags = "--flush-interval",
     .value = SettingValue::kNumber,
     .syntax = "MS",
     .default_text = "100",
     .min = 1,
     .max = kMaxFlushIntervalMs,
     .env = "PROFLAUNCH_FLUSH_INTERVAL_MS",
     .read = read_flush_interval,
     .example = "50",
     .help = "milliseconds between flushes to disk: what a SIGKILL can lose"},
    {.id = Setting::kStacks,
     .flags = "--stacks",
     .value = SettingValue::kText,
     .syntax = "LIST",
     .default_text = "all",
     .check = check_stack_points,
     .env = "PROFLAUNCH_STACKS",
     .read = read_stacks,
     .example = "sync,memory",
     .help = "where to record call stacks (native and Python): none, all, or a comma list of launch (kernels, "
             "copies, memsets), memory (allocations and frees), sync, blocking (libc calls that blocked)"},
    {.id = Setting::kCountCalls,
     .flags = "--count-calls",
     .value = SettingValue::kText,
     .syntax = "LIST",
     .default_text = "default",
     .check = check_counted_calls,
     .env = "PROFLAUNCH_COUNTED",
     .read = read_counted_calls,
     .example = "default,-cudaEventQuery,cudaStreamQuery",
     .help = "calls counted per thread rather than recorded one by one (recorded anyway when they fail): "
             "default (trivial getters such as cuCtxGetCurrent, cudaGetLastError), none (no API is counted for "
             "its own sake), or a comma list applied in order, e.g. default,-cudaEventQuery,cudaStreamQuery. "
             "The driver calls a runtime call makes on its behalf are always counted, as part of that call"},
    {.id = Setting::kStackDepth,
     .flags = "--stack-depth",
     .value = SettingValue::kNumber,
     .syntax = "N",
     .default_text = "32",
     .min = 1,
     .max = kMaxStackDepth,
     .env = "PROFLAUNCH_STACK_DEPTH",
     .read = read_stack_depth,
     .example = "7",
     .help = "frames kept per call stack"},
    {.id = Setting::kNoSymbols,
     .flags = "--no-symbols",
     .help = "do not append the symbol table at the end (proftrace then looks names up in the program's "
             "files, which must still be there)"},
    {.id = Setting::kCpuSampling,
     .flags = "--cpu-sampling",
     .value = SettingValue::kText,
     .syntax = "HZ|off",
     .default_text = "1000",
     .check = check_cpu_sampling,
     .env = "PROFLAUNCH_CPU_SAMPLING",
     .read = read_cpu_sampling,
     .example = "250",
     .help = "sample the native and Python stack of every thread this many times per second of its own CPU "
             "time (a blocked thread takes no sample); off: no sampling"},
    {.id = Setting::kOsrtThreshold,
     .flags = "--osrt-threshold",
     .value = SettingValue::kText,
     .syntax = "DURATION|off",
     .default_text = "20us",
     .check = check_osrt_threshold,
     .env = "PROFLAUNCH_OSRT_THRESHOLD",
     .read = read_osrt_threshold,
     .example = "1ms",
     .help = "record the libc calls where threads wait (locks, condition variables, poll, read on pipes and "
             "sockets, sleeps, ...) that block at least this long, with their stacks; off: none"},
    {.id = Setting::kGpuMetrics,
     .flags = "--gpu-metrics",
     .value = SettingValue::kText,
     .syntax = "HZ|off",
     .default_text = "10",
     .check = check_gpu_metrics,
     .env = "PROFLAUNCH_GPU_METRICS",
     .read = read_gpu_metrics,
     .example = "50",
     .help = "sample each device's utilization, memory, clocks, power, temperature, PCIe and NVLink through "
             "NVML (NVIDIA) and ROCm SMI (AMD) this many times per second, from the launcher; off: none"},
    {.id = Setting::kGpuMetricsCounters,
     .flags = "--gpu-metrics-counters",
     .value = SettingValue::kText,
     .syntax = "DEFAULT|LIST",
     .check = check_gpu_metrics_counters,
     .env = "PROFLAUNCH_GPU_METRICS_COUNTERS",
     .read = read_gpu_metrics_counters,
     .example = "DEFAULT",
     .help = "also sample the GPU's own counters inside the program at 10 kHz (CUPTI PM sampling, NVIDIA): "
             "DEFAULT (SM active, SM occupancy, tensor pipe, graphics engine, DRAM, PCIe and NVLink read/write) or "
             "a comma list of CUPTI metric names; needs profiling permission (else it says why and goes on with "
             "NVML)"},
    {.id = Setting::kCaptureRange,
     .flags = "--capture-range",
     .value = SettingValue::kText,
     .syntax = "cudaProfilerApi|nvtx:NAME[@DOMAIN]",
     .env = "PROFLAUNCH_CAPTURE_RANGE",
     .read = read_capture_text<&CaptureOptions::capture_range>,
     .example = "nvtx:step@train",
     .group = &kCaptureGroup,
     .help = "record only between cudaProfilerStart and cudaProfilerStop (cudaProfilerApi), or inside each "
             "occurrence of an NVTX range (nvtx:NAME or nvtx:NAME@DOMAIN)"},
    {.id = Setting::kCaptureRangeRepeat,
     .flags = "--capture-range-repeat",
     .value = SettingValue::kText,
     .syntax = "N",
     .default_text = "1",
     .env = "PROFLAUNCH_CAPTURE_REPEAT",
     .read = read_capture_text<&CaptureOptions::capture_range_repeat>,
     .needs = Setting::kCaptureRange,
     .example = "3",
     .group = &kCaptureGroup,
     .help = "how many such windows to record (0: every one)"},
    {.id = Setting::kDelay,
     .flags = "--delay",
     .value = SettingValue::kText,
     .syntax = "DURATION",
     .env = "PROFLAUNCH_DELAY",
     .read = read_capture_text<&CaptureOptions::delay>,
     .example = "1.5s",
     .group = &kCaptureGroup,
     .help = "record nothing for this long after the program starts (e.g. 30s, 500ms, 2m)"},
    {.id = Setting::kDuration,
     .flags = "--duration",
     .value = SettingValue::kText,
     .syntax = "DURATION",
     .env = "PROFLAUNCH_DURATION",
     .read = read_capture_text<&CaptureOptions::duration>,
     .example = "250ms",
     .group = &kCaptureGroup,
     .help = "close each window after this long (alone: record from the start, or from --delay, for this "
             "long)"},
    {.id = Setting::kSteps,
     .flags = "--steps",
     .value = SettingValue::kText,
     .syntax = "WAIT:WARMUP:ACTIVE[:REPEAT]",
     .env = "PROFLAUNCH_STEPS",
     .read = read_capture_text<&CaptureOptions::steps>,
     .needs = Setting::kStepRange,
     .example = "100:0:6:1",
     .group = &kCaptureGroup,
     .help = "record the ACTIVE steps of each cycle, as torch.profiler.schedule (REPEAT 0 or absent: every "
             "cycle). E.g. --steps=100:0:6:1 records steps 100-105"},
    {.id = Setting::kStepRange,
     .flags = "--step-range",
     .value = SettingValue::kText,
     .syntax = "NAME[@DOMAIN]|kernel:NAME",
     .env = "PROFLAUNCH_STEP_RANGE",
     .read = read_capture_text<&CaptureOptions::step_range>,
     .needs = Setting::kSteps,
     .example = "kernel:sgd_update",
     .group = &kCaptureGroup,
     .help = "what one step is: an NVTX range NAME[@DOMAIN] (each occurrence), or kernel:NAME (from one "
             "launch of the kernel to the next)"},
    {.id = Setting::kIdle,
     .flags = "--idle",
     .env = "PROFLAUNCH_IDLE",
     .read = read_idle,
     .group = &kCaptureGroup,
     .help = "start with recording off: record only between `proflaunch ctl start` and `stop` (or for "
             "`ctl start --duration`)"},
    {.id = Setting::kRing,
     .flags = "--ring",
     .value = SettingValue::kText,
     .syntax = "DURATION",
     .env = "PROFLAUNCH_RING",
     .read = read_capture_text<&CaptureOptions::ring>,
     .example = "30s",
     .group = &kRingGroup,
     .help = "record all along but keep only the last DURATION (e.g. 30s) in memory; it is written to the "
             "trace on a crash signal, the first out-of-memory, a sticky device error, `proflaunch ctl dump`, "
             "or at exit with --ring-dump-at-exit"},
    {.id = Setting::kRingSize,
     .flags = "--ring-size",
     .value = SettingValue::kText,
     .syntax = "SIZE",
     .default_text = "256M",
     .env = "PROFLAUNCH_RING_SIZE",
     .read = read_capture_text<&CaptureOptions::ring_size>,
     .needs = Setting::kRing,
     .example = "8M",
     .group = &kRingGroup,
     .help = "at most this much compressed data kept per process (at least 4M); the bound wins over "
             "DURATION"},
    {.id = Setting::kRingDumpAtExit,
     .flags = "--ring-dump-at-exit",
     .env = "PROFLAUNCH_RING_DUMP_AT_EXIT",
     .read = read_ring_dump_at_exit,
     .needs = Setting::kRing,
     .group = &kRingGroup,
     .help = "also write out what the ring holds when each process exits or execs"},
    {.id = Setting::kWaitAfterExit,
     .flags = "--wait-after-exit",
     .value = SettingValue::kNumber,
     .syntax = "SECONDS",
     .default_text = "10",
     .min = 0,
     .max = 86400,
     .example = "3",
     .help = "when the program exits, wait up to this many seconds for the traced processes it left running "
             "(daemons, orphans) before joining; those still running then are joined as far as they got, and "
             "their parts kept for a later --join"},
    {.id = Setting::kVerbose,
     .flags = "-v,--verbose",
     .env = "PROFLAUNCH_VERBOSE",
     .read = read_verbose,
     .help = "one line per traced process on stderr"},
    {.id = Setting::kQuiet,
     .flags = "-q,--quiet",
     .help = "no summary line at the end"},
    {.id = Setting::kJoin,
     .flags = "--join",
     .value = SettingValue::kText,
     .syntax = "OUT",
     .example = "run.trace",
     .help = "assemble OUT from the parts in OUT.parts/ left by an interrupted run"},
    {.id = Setting::kExecParent,
     .value = SettingValue::kText,
     .syntax = "PID:SECTION",
     .env = "PROFLAUNCH_EXEC_PARENT",
     .read = read_exec_parent,
     .example = "1234:00000000deadbeef",
     .help = "set by the exec hooks for the image they exec: the pid and the section (hex) it continues"},
};

static_assert(sizeof kSettingRows / sizeof kSettingRows[0] == kSettingCount, "one row per Setting");

constexpr bool rows_follow_the_enum() {
  for (size_t i = 0; i < kSettingCount; ++i)
    if (static_cast<size_t>(kSettingRows[i].id) != i) return false;
  return true;
}
static_assert(rows_follow_the_enum(), "kSettingRows lists the settings in the order of enum Setting");

constexpr const SettingRow& setting_row(Setting setting) { return kSettingRows[static_cast<size_t>(setting)]; }

}  // namespace proflaunch
