// libFuzzer entry point for the text the user and the launcher hand the
// shim: the PROFLAUNCH_* settings (parse_config, PROFLAUNCH_COUNTED), the
// capture options (--capture-range, --steps, --delay, --ring, ...) and the
// -o name patterns (%p %h %q{VAR} %n %%).
//
// The input is NUL-separated fields; its first byte picks the parser. Built
// with clang -fsanitize=fuzzer,address,undefined by scripts/fuzz.sh, and with
// the normal compiler into settings_fuzz_runner for meson test.
//
// Invariants besides "no crash, no hang": parse_config keeps every value in
// its documented range and names the problem of every value it refuses; the
// launcher's check of an option never lets through what the shim refuses; a
// refused capture option says which, within the error buffer; an output
// name is a path or an error, never both, with every placeholder expanded.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "launcher/output_name.h"
#include "preload/capture/capture_spec.h"
#include "preload/config.h"

namespace {

using namespace proflaunch;

[[noreturn]] void invariant_broken(const char* what) {
  std::fprintf(stderr, "settings fuzzer: invariant broken: %s\n", what);
  __builtin_trap();
}

std::vector<std::string> fields(const uint8_t* data, size_t size) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) out.emplace_back();
    else out.back().push_back(static_cast<char>(data[i]));
  }
  return out;
}

// Field i is the variable of the i-th row the shim reads (preload/settings.h,
// in table order); the fields after those go, in the order asked, to the
// other variables parse_config reads (the rank variables).
struct FakeEnvironment {
  const std::vector<std::string>* values;
  size_t next_other = 0;
};
const char* fake_getenv(const char* name, void* context) {
  auto* env = static_cast<FakeEnvironment*>(context);
  size_t field = 0;
  size_t shim_rows = 0;
  bool found = false;
  for (const SettingRow& row : kSettingRows) {
    if (row.read == nullptr) continue;
    if (std::strcmp(row.env, name) == 0) {
      field = shim_rows;
      found = true;
    }
    ++shim_rows;
  }
  if (!found) field = shim_rows + env->next_other++;
  if (field >= env->values->size()) return nullptr;
  const std::string& value = (*env->values)[field];
  return value == "<unset>" ? nullptr : value.c_str();
}
void on_warning(const char* variable, const char*, const char* problem, void*) {
  if (variable == nullptr || problem == nullptr || *problem == '\0') invariant_broken("a warning without its problem");
}

void check_config(const std::vector<std::string>& values) {
  Config config;
  FakeEnvironment env{&values};
  parse_config(config, fake_getenv, &env, on_warning, nullptr);
  const size_t buffer = config.buffer_bytes_per_thread;
  if (buffer < kMinBufferBytes || buffer > kMaxBufferBytes || (buffer & (buffer - 1)) != 0)
    invariant_broken("buffer size out of range or not a power of two");
  if (config.flush_interval_ms > kMaxFlushIntervalMs) invariant_broken("flush interval above its maximum");
  if (config.stack_depth == 0 || config.stack_depth > kMaxStackDepth) invariant_broken("stack depth out of range");
  if (strnlen(config.parts_dir, sizeof config.parts_dir) == sizeof config.parts_dir)
    invariant_broken("parts dir not terminated");
  if (strnlen(config.counted_calls, sizeof config.counted_calls) == sizeof config.counted_calls)
    invariant_broken("counted calls not terminated");
}

void on_counted(const char* name, size_t length, bool, void* context) {
  const auto* text = static_cast<const std::string*>(context);
  if (name < text->data() || name + length > text->data() + text->size()) {
    if (std::strcmp(name, "default") != 0 && std::strcmp(name, "none") != 0)
      invariant_broken("a counted-call item outside the text");
  }
}

void check_capture(const std::vector<std::string>& values) {
  auto field = [&](size_t i) -> const char* {
    return i < values.size() && values[i] != "<unset>" ? values[i].c_str() : nullptr;
  };
  CaptureOptions options;
  options.capture_range = field(1);
  options.capture_range_repeat = field(2);
  options.delay = field(3);
  options.duration = field(4);
  options.steps = field(5);
  options.step_range = field(6);
  options.ring = field(7);
  options.ring_size = field(8);
  options.idle = values.size() > 9;
  options.ring_dump_at_exit = values.size() > 10;
  CaptureSpec spec;
  char error[96];
  std::memset(error, 'x', sizeof error);
  if (!parse_capture_options(options, spec, error, sizeof error)) {
    if (memchr(error, '\0', sizeof error) == nullptr) invariant_broken("capture error not terminated");
    if (error[0] == '\0') invariant_broken("a refused capture option without a message");
  } else {
    if (strnlen(spec.name, sizeof spec.name) == sizeof spec.name) invariant_broken("capture name not terminated");
    if (strnlen(spec.domain, sizeof spec.domain) == sizeof spec.domain) invariant_broken("domain not terminated");
  }
  uint64_t ns = 0;
  if (field(0) != nullptr) (void)parse_duration(field(0), ns);
}

// What the launcher's check of an option lets through, the shim's reader of
// its variable takes without a warning: no value reaches the program only to
// be replaced by a default.
void check_launcher_agrees_with_shim(const std::string& text) {
  for (const SettingRow& row : kSettingRows) {
    if (row.check == nullptr || row.read == nullptr) continue;
    char problem[128];
    if (!row.check(text.c_str(), problem, sizeof problem)) {
      if (strnlen(problem, sizeof problem) == 0) invariant_broken("a refused option without a message");
      continue;
    }
    Config config;
    CaptureOptions capture;
    SettingTarget target{config, capture};
    if (row.read(text.c_str(), target) != nullptr) invariant_broken("the launcher passes on what the shim refuses");
  }
}

// %n: the first two names asked for are taken. (Judging by the name, a
// pattern ending in a literal 1 made every counter taken: a million
// candidates, seconds per input.)
int g_names_asked = 0;
bool exists_below_three(const std::string&) { return ++g_names_asked <= 2; }

void check_output_name(const std::vector<std::string>& values) {
  const std::string& pattern = values.size() > 1 ? values[1] : values[0];
  g_names_asked = 0;
  const launcher::NameResult result = launcher::expand_output_name(pattern, 4242, exists_below_three);
  if (result.path.empty() == result.error.empty()) invariant_broken("an output name is a path or an error");
  if (!result.path.empty()) {
    // Every placeholder was replaced: no '%' is left but those written as "%%".
    size_t literal = 0;
    for (size_t i = 0; i + 1 < pattern.size(); ++i)
      if (pattern[i] == '%' && pattern[i + 1] == '%') ++literal, ++i;
    size_t left = 0;
    for (char c : result.path) left += c == '%';
    if (left > literal) invariant_broken("a placeholder left unexpanded");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<std::string> values = fields(data + 1, size - 1);
  switch (data[0] % 4) {
    case 0: check_config(values); break;
    case 1: {
      const std::string& text = values[0];
      (void)parse_counted_calls(text.c_str(), on_counted, const_cast<std::string*>(&text));
      size_t bytes = 0;
      uint32_t bits = 0;
      GpuTiming timing;
      (void)parse_byte_size(text.c_str(), bytes);
      (void)parse_trace_domains(text.c_str(), bits);
      (void)parse_stack_points(text.c_str(), bits);
      (void)parse_gpu_timing(text.c_str(), timing);
      check_launcher_agrees_with_shim(text);
      break;
    }
    case 2: check_capture(values); break;
    default: check_output_name(values); break;
  }
  return 0;
}
