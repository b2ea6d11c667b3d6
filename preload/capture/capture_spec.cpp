#include "preload/capture/capture_spec.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace proflaunch {
namespace {

bool fail(char* error, size_t error_bytes, const char* option, const char* value, const char* problem) {
  if (error != nullptr && error_bytes != 0)
    std::snprintf(error, error_bytes, "%s '%s': %s", option, value != nullptr ? value : "", problem);
  return false;
}

bool parse_count(const char* text, uint32_t& value) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long parsed = std::strtoul(text, &end, 10);
  if (errno != 0 || *end != '\0' || parsed > 0xFFFFFFFFul) return false;
  value = static_cast<uint32_t>(parsed);
  return true;
}

// NAME[@DOMAIN] into the spec: the last '@' separates the domain.
bool set_range_name(const char* text, CaptureSpec& spec) {
  const char* at = std::strrchr(text, '@');
  const size_t name_bytes = at != nullptr ? static_cast<size_t>(at - text) : std::strlen(text);
  if (name_bytes == 0 || name_bytes >= kMaxCaptureNameBytes) return false;
  std::memcpy(spec.name, text, name_bytes);
  spec.name[name_bytes] = '\0';
  spec.domain[0] = '\0';
  if (at != nullptr) {
    if (std::strlen(at + 1) >= kMaxCaptureNameBytes) return false;
    std::strcpy(spec.domain, at + 1);
  }
  return true;
}

bool starts_with(const char* text, const char* prefix) { return std::strncmp(text, prefix, std::strlen(prefix)) == 0; }

}  // namespace

bool parse_byte_size(const char* text, size_t& bytes) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long number = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text) return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    default: return false;
  }
  if (shift != 0) {
    ++end;
    if (*end == 'i' || *end == 'I') ++end;  // "8MiB"
    if (*end == 'b' || *end == 'B') ++end;
    if (*end != '\0') return false;
  }
  if (number > (UINT64_MAX >> shift)) return false;
  bytes = static_cast<size_t>(number << shift);
  return true;
}

bool parse_duration(const char* text, uint64_t& ns) {
  if (text == nullptr || !((*text >= '0' && *text <= '9') || *text == '.')) return false;
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (errno != 0 || end == text || !(value >= 0)) return false;
  double unit = 1e9;
  if (*end == '\0' || std::strcmp(end, "s") == 0) unit = 1e9;
  else if (std::strcmp(end, "ms") == 0) unit = 1e6;
  else if (std::strcmp(end, "us") == 0) unit = 1e3;
  else if (std::strcmp(end, "ns") == 0) unit = 1;
  else if (std::strcmp(end, "m") == 0 || std::strcmp(end, "min") == 0) unit = 60e9;
  else if (std::strcmp(end, "h") == 0) unit = 3600e9;
  else return false;
  const double total = value * unit;
  if (total > 1e18) return false;  // ~31 years
  ns = static_cast<uint64_t>(total);
  return true;
}

bool parse_capture_options(const CaptureOptions& o, CaptureSpec& spec, char* error, size_t error_bytes) {
  spec = CaptureSpec{};
  if (o.delay != nullptr && !parse_duration(o.delay, spec.delay_ns))
    return fail(error, error_bytes, "--delay", o.delay, "expected a duration such as 30s, 500ms or 2m");
  if (o.duration != nullptr) {
    if (!parse_duration(o.duration, spec.duration_ns))
      return fail(error, error_bytes, "--duration", o.duration, "expected a duration such as 30s, 500ms or 2m");
    if (spec.duration_ns == 0) return fail(error, error_bytes, "--duration", o.duration, "must be longer than 0");
  }
  if (o.capture_range != nullptr && o.steps != nullptr)
    return fail(error, error_bytes, "--steps", o.steps, "cannot be combined with --capture-range (choose one)");
  if (o.capture_range_repeat != nullptr && o.capture_range == nullptr)
    return fail(error, error_bytes, "--capture-range-repeat", o.capture_range_repeat, "needs --capture-range");
  if (o.step_range != nullptr && o.steps == nullptr)
    return fail(error, error_bytes, "--step-range", o.step_range, "needs --steps=WAIT:WARMUP:ACTIVE[:REPEAT]");
  if (o.steps != nullptr && o.step_range == nullptr)
    return fail(error, error_bytes, "--steps", o.steps,
                "needs --step-range (an NVTX range NAME[@DOMAIN], or kernel:NAME) to say what a step is");
  if (o.idle && (o.capture_range != nullptr || o.steps != nullptr || o.delay != nullptr))
    return fail(error, error_bytes, "--idle", "",
                "records only when asked (proflaunch ctl start); it cannot be combined with --capture-range, "
                "--steps or --delay");

  if (o.ring != nullptr) {
    if (!parse_duration(o.ring, spec.ring_ns) || spec.ring_ns == 0)
      return fail(error, error_bytes, "--ring", o.ring,
                  "expected how much to keep, a duration longer than 0 such as 30s or 2m");
    if (o.capture_range != nullptr || o.steps != nullptr || o.delay != nullptr || o.duration != nullptr || o.idle)
      return fail(error, error_bytes, "--ring", o.ring,
                  "records the whole run and keeps its end; it cannot be combined with --capture-range, "
                  "--steps, --delay, --duration or --idle");
    if (o.ring_size != nullptr) {
      size_t bytes = 0;
      if (!parse_byte_size(o.ring_size, bytes) || bytes < kMinRingBytes)
        return fail(error, error_bytes, "--ring-size", o.ring_size,
                    "expected a size of at least 4M, such as 256M or 2G");
      spec.ring_bytes = bytes;
    }
    spec.ring_dump_at_exit = o.ring_dump_at_exit;
  } else if (o.ring_size != nullptr) {
    return fail(error, error_bytes, "--ring-size", o.ring_size, "needs --ring=DURATION");
  } else if (o.ring_dump_at_exit) {
    return fail(error, error_bytes, "--ring-dump-at-exit", "", "needs --ring=DURATION");
  }

  if (o.capture_range != nullptr) {
    const char* text = o.capture_range;
    if (strcasecmp(text, "cudaProfilerApi") == 0) {
      spec.mode = CaptureMode::kProfilerApi;
    } else if (starts_with(text, "nvtx:")) {
      if (!set_range_name(text + 5, spec))
        return fail(error, error_bytes, "--capture-range", text,
                    "expected nvtx:NAME or nvtx:NAME@DOMAIN with a non-empty NAME (under 256 bytes)");
      spec.mode = CaptureMode::kNvtxRange;
    } else {
      return fail(error, error_bytes, "--capture-range", text, "expected cudaProfilerApi or nvtx:NAME[@DOMAIN]");
    }
    if (o.capture_range_repeat != nullptr && !parse_count(o.capture_range_repeat, spec.repeat))
      return fail(error, error_bytes, "--capture-range-repeat", o.capture_range_repeat,
                  "expected a number of windows (0: every one)");
  } else if (o.steps != nullptr) {
    uint32_t fields[4] = {0, 0, 0, 0};
    int count = 0;
    const char* p = o.steps;
    while (count < 4) {
      char item[16];
      const char* colon = std::strchr(p, ':');
      const size_t n = colon != nullptr ? static_cast<size_t>(colon - p) : std::strlen(p);
      if (n == 0 || n >= sizeof item) break;
      std::memcpy(item, p, n);
      item[n] = '\0';
      if (!parse_count(item, fields[count])) break;
      ++count;
      if (colon == nullptr) {
        p = nullptr;
        break;
      }
      p = colon + 1;
    }
    if (p != nullptr || count < 3)
      return fail(error, error_bytes, "--steps", o.steps,
                  "expected WAIT:WARMUP:ACTIVE or WAIT:WARMUP:ACTIVE:REPEAT (numbers of steps, as "
                  "torch.profiler.schedule; REPEAT 0 or absent: cycle until the end)");
    if (fields[2] == 0) return fail(error, error_bytes, "--steps", o.steps, "ACTIVE must be at least 1 step");
    spec.wait = fields[0];
    spec.warmup = fields[1];
    spec.active = fields[2];
    spec.cycles = count == 4 ? fields[3] : 0;
    spec.mode = CaptureMode::kSteps;
    const char* range = o.step_range;
    if (starts_with(range, "kernel:")) {
      const size_t n = std::strlen(range + 7);
      if (n == 0 || n >= kMaxCaptureNameBytes)
        return fail(error, error_bytes, "--step-range", range, "expected kernel:NAME with a non-empty NAME");
      std::memcpy(spec.name, range + 7, n + 1);
      spec.step_source = StepSource::kKernel;
    } else if (starts_with(range, "py:")) {
      return fail(error, error_bytes, "--step-range", range,
                  "Python functions as steps are not supported yet: mark the step with an NVTX range "
                  "(torch.cuda.nvtx.range) or name a kernel that runs once per step (kernel:NAME)");
    } else {
      if (!set_range_name(starts_with(range, "nvtx:") ? range + 5 : range, spec))
        return fail(error, error_bytes, "--step-range", range,
                    "expected an NVTX range NAME[@DOMAIN] or kernel:NAME (non-empty, under 256 bytes)");
      spec.step_source = StepSource::kNvtx;
    }
  } else if (o.idle) {
    spec.mode = CaptureMode::kIdle;
  } else if (o.delay != nullptr || o.duration != nullptr) {
    spec.mode = CaptureMode::kTimed;
  }
  if (error != nullptr && error_bytes != 0) error[0] = '\0';
  return true;
}

const char* capture_mode_name(CaptureMode mode) {
  switch (mode) {
    case CaptureMode::kAlways: return "whole run";
    case CaptureMode::kTimed: return "delay/duration";
    case CaptureMode::kProfilerApi: return "cudaProfilerApi";
    case CaptureMode::kNvtxRange: return "nvtx range";
    case CaptureMode::kSteps: return "steps";
    case CaptureMode::kIdle: return "idle (on request)";
  }
  return "?";
}

}  // namespace proflaunch
