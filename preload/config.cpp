#include "preload/config.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace proflaunch {
namespace {

// Why the defaults are what they are:
//
// Buffer per thread: 8 MiB. The fastest realistic producer is a training
// loop's launch thread. A kernel launch costs the host at least ~2 us in the
// real driver, so one thread produces at most ~500k launch records/s; at 96
// bytes each (KernelLaunchRecord, the largest event) that is ~48 MB/s. The
// writer drains every ~10 ms (writer.cpp), i.e. ~0.5 MB per drain at that
// rate, and 8 MiB absorbs a writer stall of ~170 ms (a slow disk, the
// compression of a few chunks) before anything is dropped. Memory is touched
// only by threads that record.
//
// Flush interval: 100 ms. Records reach the part file at most this long after
// they were committed, so SIGKILL or the OOM killer loses at most this window.
// Capped at 200 ms (the promise the documentation makes).
//
// Stacks: all points, 32 frames. Measured on the 2-vCPU build machine
// (bench/, figures a, f, g): a native stack costs 0.15-0.35 us (9-32 frames;
// ~9 ns a frame in unw_backtrace, ~40 ns for the hash, lookup and record), a
// Python stack ~0.17 us more; over the null driver a launch costs +0.28 us
// with stacks against +0.06 us without. A real driver launch costs
// the host several us, a PyTorch op 5-20 us, and the GPU nothing: 2-15 %
// of host launch time buys the call site of every kernel, copy, sync and
// allocation. A repeated call site adds ~0.5 byte per event to the file
// (tests/e2e/stacks/dedup_test). Launch-bound microbenchmarks can pass
// --stacks=sync,memory or none. 32 frames reach from a CUDA call up through a
// framework's dispatcher into the user's code in the programs we tried;
// deeper stacks cost ~8 ns a frame.

// A name of a comma list and the bits it sets.
struct NamedBits {
  uint32_t bits;
  const char* name;
};
constexpr NamedBits kStackPointNames[] = {
    {kStacksLaunch, "launch"}, {kStacksMemory, "memory"}, {kStacksSync, "sync"},
    {kStacksBlocking, "blocking"}, {kStacksAll, "all"},  {0, "none"},
};

constexpr NamedBits kDomainNames[] = {
    {kTraceCuda, "cuda"}, {kTraceMemory, "memory"}, {kTraceNccl, "nccl"}, {kTraceNvtx, "nvtx"}, {kTraceAll, "all"},
};

// The bits of a comma list of names of `table`, or false for an empty
// item or a name it does not have. No allocation: the shim's constructor
// parses with it.
template <size_t N>
bool parse_named_bits(const char* text, const NamedBits (&table)[N], uint32_t& bits) {
  if (text == nullptr) return false;
  uint32_t result = 0;
  for (const char* cursor = text;;) {
    const char* comma = std::strchr(cursor, ',');
    const size_t length = comma ? static_cast<size_t>(comma - cursor) : std::strlen(cursor);
    bool known = false;
    for (const NamedBits& entry : table) {
      if (std::strlen(entry.name) == length && std::strncmp(cursor, entry.name, length) == 0) {
        result |= entry.bits;
        known = true;
      }
    }
    if (!known) return false;
    if (comma == nullptr) break;
    cursor = comma + 1;
  }
  bits = result;
  return true;
}

bool parse_u64(const char* text, uint64_t& value) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long parsed = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  value = parsed;
  return true;
}

bool parse_i32(const char* text, int32_t& value) {
  if (text == nullptr || *text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  const long parsed = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || parsed < -1 || parsed > INT32_MAX) return false;
  value = static_cast<int32_t>(parsed);
  return true;
}

bool parse_bool(const char* text, bool& value) {
  if (std::strcmp(text, "1") == 0 || std::strcmp(text, "true") == 0 ||
      std::strcmp(text, "yes") == 0 || std::strcmp(text, "on") == 0) {
    value = true;
    return true;
  }
  if (std::strcmp(text, "0") == 0 || std::strcmp(text, "false") == 0 ||
      std::strcmp(text, "no") == 0 || std::strcmp(text, "off") == 0 || *text == '\0') {
    value = false;
    return true;
  }
  return false;
}

size_t round_up_to_power_of_two(size_t bytes) {
  size_t power = 1;
  while (power < bytes) power <<= 1;
  return power;
}

// "<pid>:<hex section>"
bool parse_exec_parent(const char* text, uint32_t& pid, uint64_t& section) {
  errno = 0;
  char* end = nullptr;
  const unsigned long parsed_pid = std::strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != ':' || parsed_pid == 0 || parsed_pid > UINT32_MAX)
    return false;
  const char* hex = end + 1;
  const unsigned long long parsed_section = std::strtoull(hex, &end, 16);
  if (errno != 0 || end == hex || *end != '\0' || parsed_section == 0) return false;
  pid = static_cast<uint32_t>(parsed_pid);
  section = parsed_section;
  return true;
}

}  // namespace

bool parse_trace_domains(const char* text, uint32_t& domains) { return parse_named_bits(text, kDomainNames, domains); }

bool parse_gpu_timing(const char* text, GpuTiming& timing) {
  if (text == nullptr) return false;
  if (std::strcmp(text, "events") == 0) {
    timing = GpuTiming::kEvents;
    return true;
  }
  if (std::strcmp(text, "none") == 0) {
    timing = GpuTiming::kNone;
    return true;
  }
  if (std::strcmp(text, "cupti") == 0) {
    timing = GpuTiming::kCupti;
    return true;
  }
  if (std::strcmp(text, "auto") == 0) {
    timing = GpuTiming::kAuto;
    return true;
  }
  return false;
}

bool parse_stack_points(const char* text, uint32_t& points) {
  if (text == nullptr || *text == '\0') return false;
  return parse_named_bits(text, kStackPointNames, points);
}

bool parse_rate_hz(const char* text, uint32_t max_hz, uint32_t& hz) {
  if (text == nullptr) return false;
  if (std::strcmp(text, "off") == 0 || std::strcmp(text, "0") == 0) {
    hz = 0;
    return true;
  }
  uint64_t value = 0;
  if (!parse_u64(text, value) || value == 0 || value > max_hz) return false;
  hz = static_cast<uint32_t>(value);
  return true;
}

bool parse_osrt_threshold(const char* text, uint64_t& ns) {
  if (text == nullptr) return false;
  if (std::strcmp(text, "off") == 0) {
    ns = kOsrtOff;
    return true;
  }
  return parse_duration(text, ns);
}

const char* trace_domain_name(TraceDomain domain) {
  for (const NamedBits& entry : kDomainNames)
    if (entry.bits == domain) return entry.name;
  return "?";
}

// The readers of the rows of settings.h, in the table's order. Each keeps the
// default (Config's initializer) when it refuses the text.

const char* read_parts_dir(const char* dir, SettingTarget& target) {
  if (*dir == '\0') return nullptr;  // as unset
  if (std::strlen(dir) + 64 >= kMaxPathBytes) return "path too long; not recording";
  if (dir[0] != '/') return "must be an absolute path; not recording";
  std::strcpy(target.config.parts_dir, dir);
  return nullptr;
}

const char* read_gpu_timing(const char* text, SettingTarget& target) {
  if (!parse_gpu_timing(text, target.config.gpu_timing)) return "expected auto, cupti, events or none; using auto";
  return nullptr;
}

const char* read_trace(const char* text, SettingTarget& target) {
  if (!parse_trace_domains(text, target.config.trace_domains))
    return "expected a comma list of cuda,memory,nccl,nvtx; tracing all";
  return nullptr;
}

const char* read_buffer_size(const char* text, SettingTarget& target) {
  size_t bytes = 0;
  if (!parse_byte_size(text, bytes)) return "not a size (e.g. 8M); using 8M";
  if (bytes < kMinBufferBytes || bytes > kMaxBufferBytes) return "outside 64K..1G; using 8M";
  target.config.buffer_bytes_per_thread = round_up_to_power_of_two(bytes);
  return nullptr;
}

const char* read_flush_interval(const char* text, SettingTarget& target) {
  uint64_t ms = 0;
  if (!parse_u64(text, ms) || ms == 0) return "not a positive number of milliseconds; using 100";
  if (ms > kMaxFlushIntervalMs) {
    target.config.flush_interval_ms = kMaxFlushIntervalMs;  // the promise to SIGKILL holds
    return "above the 200 ms limit; using 200";
  }
  target.config.flush_interval_ms = static_cast<uint32_t>(ms);
  return nullptr;
}

const char* read_stacks(const char* text, SettingTarget& target) {
  if (!parse_stack_points(text, target.config.stack_points))
    return "expected none, all or a comma list of launch,memory,sync,blocking; using all";
  return nullptr;
}

const char* read_counted_calls(const char* text, SettingTarget& target) {
  const size_t length = std::strlen(text);
  if (length >= sizeof target.config.counted_calls || !parse_counted_calls(text, nullptr, nullptr))
    return "expected default, none or a comma list of [-]API names; using default";
  std::memcpy(target.config.counted_calls, text, length + 1);
  return nullptr;
}

const char* read_stack_depth(const char* text, SettingTarget& target) {
  uint64_t depth = 0;
  if (!parse_u64(text, depth) || depth == 0 || depth > kMaxStackDepth) return "expected 1..128 frames; using 32";
  target.config.stack_depth = static_cast<uint32_t>(depth);
  return nullptr;
}

const char* read_cpu_sampling(const char* text, SettingTarget& target) {
  if (!parse_rate_hz(text, kMaxCpuSamplingHz, target.config.cpu_sampling_hz))
    return "expected off or samples per second, 1..10000; using 1000";
  return nullptr;
}

const char* read_osrt_threshold(const char* text, SettingTarget& target) {
  if (!parse_osrt_threshold(text, target.config.osrt_threshold_ns))
    return "expected off or a duration such as 20us, 1ms, 0; using 20us";
  return nullptr;
}

const char* read_gpu_metrics(const char* text, SettingTarget& target) {
  if (!parse_rate_hz(text, kMaxGpuMetricsHz, target.config.gpu_metrics_hz))
    return "expected off or samples per second, 1..1000; using 10";
  return nullptr;
}

const char* read_gpu_metrics_counters(const char* text, SettingTarget& target) {
  const size_t length = std::strlen(text);
  if (length >= sizeof target.config.gpu_metrics_counters) return "too long; PM sampling off";
  std::memcpy(target.config.gpu_metrics_counters, text, length + 1);
  return nullptr;
}

bool check_cpu_sampling(const char* text, char* problem, size_t problem_bytes) {
  uint32_t hz = 0;
  if (parse_rate_hz(text, kMaxCpuSamplingHz, hz)) return true;
  std::snprintf(problem, problem_bytes, "expected off or samples per second of CPU time, 1..%u, got '%s'",
                kMaxCpuSamplingHz, text);
  return false;
}

bool check_osrt_threshold(const char* text, char* problem, size_t problem_bytes) {
  uint64_t ns = 0;
  if (parse_osrt_threshold(text, ns)) return true;
  std::snprintf(problem, problem_bytes, "expected off or a duration such as 20us, 1ms or 0 (every call), got '%s'",
                text);
  return false;
}

bool check_gpu_metrics(const char* text, char* problem, size_t problem_bytes) {
  uint32_t hz = 0;
  if (parse_rate_hz(text, kMaxGpuMetricsHz, hz)) return true;
  std::snprintf(problem, problem_bytes, "expected off or samples per second, 1..%u, got '%s'", kMaxGpuMetricsHz,
                text);
  return false;
}

// DEFAULT, or a comma list of metric names (letters, digits, '_', '.', '-',
// '/', ':'); which names the device has is known only in the program.
bool check_gpu_metrics_counters(const char* text, char* problem, size_t problem_bytes) {
  const size_t length = std::strlen(text);
  bool item_empty = true;
  bool ok = length > 0 && length < kMaxGpuMetricsCountersBytes;
  for (size_t i = 0; ok && i < length; ++i) {
    const char c = text[i];
    if (c == ',') {
      ok = !item_empty;
      item_empty = true;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_.-/:", c) != nullptr) {
      item_empty = false;
    } else {
      ok = false;
    }
  }
  if (ok && !item_empty) return true;
  std::snprintf(problem, problem_bytes, "expected DEFAULT or a comma list of metric names, got '%s'", text);
  return false;
}

const char* read_idle(const char* text, SettingTarget& target) {
  if (!parse_bool(text, target.capture.idle)) return "expected 0 or 1; off";
  return nullptr;
}

const char* read_ring_dump_at_exit(const char* text, SettingTarget& target) {
  if (!parse_bool(text, target.capture.ring_dump_at_exit)) return "expected 0 or 1; off";
  return nullptr;
}

const char* read_verbose(const char* text, SettingTarget& target) {
  if (!parse_bool(text, target.config.verbose)) return "expected 0 or 1; quiet";
  return nullptr;
}

const char* read_exec_parent(const char* text, SettingTarget& target) {
  if (*text == '\0') return nullptr;  // as unset
  if (!parse_exec_parent(text, target.config.exec_parent_pid, target.config.exec_parent_section))
    return "expected <pid>:<hex section>; ignored";
  return nullptr;
}

// The launcher's checks: it refuses what these refuse, with exit status 2,
// before the program starts.

bool check_trace_domains(const char* text, char* problem, size_t problem_bytes) {
  uint32_t domains = 0;
  if (parse_trace_domains(text, domains)) return true;
  std::snprintf(problem, problem_bytes, "expected a comma list of cuda, memory, nccl, nvtx (or all), got '%s'", text);
  return false;
}

bool check_buffer_size(const char* text, char* problem, size_t problem_bytes) {
  size_t bytes = 0;
  if (!parse_byte_size(text, bytes)) {
    std::snprintf(problem, problem_bytes, "expected a size such as 8M or 512K, got '%s'", text);
    return false;
  }
  if (bytes < kMinBufferBytes || bytes > kMaxBufferBytes) {
    std::snprintf(problem, problem_bytes, "must be between 64K and 1G");
    return false;
  }
  return true;
}

bool check_stack_points(const char* text, char* problem, size_t problem_bytes) {
  uint32_t points = 0;
  if (parse_stack_points(text, points)) return true;
  std::snprintf(problem, problem_bytes, "expected none, all, or a comma list of launch, memory, sync, blocking, got '%s'", text);
  return false;
}

bool check_counted_calls(const char* text, char* problem, size_t problem_bytes) {
  if (std::strlen(text) >= kMaxCountedCallsBytes) {
    std::snprintf(problem, problem_bytes, "longer than %zu characters", kMaxCountedCallsBytes - 1);
    return false;
  }
  if (parse_counted_calls(text, nullptr, nullptr)) return true;
  std::snprintf(problem, problem_bytes,
                "expected default, none, or a comma list of API names, each optionally prefixed with -, got '%s'",
                text);
  return false;
}

void parse_config(Config& config, GetEnvFn getenv_fn, void* getenv_context, ConfigWarningFn warn,
                  void* warn_context) {
  auto complain = [&](const char* name, const char* value, const char* problem) {
    if (warn != nullptr) warn(name, value, problem, warn_context);
  };

  config = Config{};
  CaptureOptions capture;
  SettingTarget target{config, capture};
  for (const SettingRow& row : kSettingRows) {
    if (row.read == nullptr) continue;
    const char* text = getenv_fn(row.env, getenv_context);
    if (text == nullptr) continue;
    if (const char* problem = row.read(text, target); problem != nullptr) complain(row.env, text, problem);
  }

  char error[320];
  if (!parse_capture_options(capture, config.capture, error, sizeof error)) {
    complain(kEnvCaptureOptions, error, "recording the whole run");
    config.capture = CaptureSpec{};
  }

  // Rank variables: torchrun, then MPI and Slurm equivalents. Garbage is ignored
  // quietly: these belong to the job, not to us.
  auto get = [&](const char* name) { return getenv_fn(name, getenv_context); };
  const char* const rank_names[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"};
  for (const char* name : rank_names)
    if (parse_i32(get(name), config.rank)) break;
  const char* const local_names[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
  for (const char* name : local_names)
    if (parse_i32(get(name), config.local_rank)) break;
  const char* const size_names[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"};
  for (const char* name : size_names)
    if (parse_i32(get(name), config.world_size)) break;
}

bool parse_counted_calls(const char* text, CountedItemFn item, void* context) {
  if (text == nullptr || *text == '\0') return false;
  const char* at = text;
  while (true) {
    const char* end = at;
    while (*end != '\0' && *end != ',') ++end;
    const char* name = at;
    bool counted = true;
    if (*name == '-') {
      counted = false;
      ++name;
    }
    if (name == end) return false;
    for (const char* c = name; c < end; ++c) {
      const bool word = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_';
      if (!word) return false;
    }
    if (item != nullptr) item(name, static_cast<size_t>(end - name), counted, context);
    if (*end == '\0') return true;
    at = end + 1;
  }
}

bool tsan_allows_threads_after_fork(const char* options) noexcept {
  if (options == nullptr) return false;
  static constexpr char kFlag[] = "die_after_fork=";
  const char* value = nullptr;
  for (const char* at = std::strstr(options, kFlag); at != nullptr; at = std::strstr(at + 1, kFlag))
    value = at + sizeof kFlag - 1;
  if (value == nullptr) return false;
  size_t length = std::strcspn(value, " ,:\t\n");
  return (length == 1 && value[0] == '0') || (length == 5 && std::strncmp(value, "false", 5) == 0);
}

}  // namespace proflaunch
