#include "preload/control/capture_control.h"

#include <unistd.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/base/log.h"
#include "preload/capture/carried_state.h"
#include "preload/capture/live_set.h"
#include "preload/record/api_catalog.h"
#include "preload/record/definitions.h"
#include "preload/record/early_counts.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::capture {

std::atomic<uint32_t> g_armed{0};
std::atomic<bool> g_range_in_progress{false};

namespace {

using format::CaptureTrigger;

constexpr size_t kMaxRegisteredStrings = 16;

// A record waiting for the writer: a window's begin or end, or a carried
// state record (times already in ns).
struct Pending {
  std::vector<uint8_t> bytes;
};

struct Control {
  std::mutex mutex;
  const CaptureSpec* spec = nullptr;
  uint64_t start_ns = 0;        // the process (image) started
  bool window = false;          // a window is open
  uint32_t windows = 0;         // windows opened so far in the process
  bool done = false;            // no more windows will open
  uint64_t opened_ns = 0;
  uint64_t request_close_ns = 0;  // ctl start --duration: when the window closes
  bool delay_fired = false;
  // Steps.
  uint64_t steps = 0;           // step occurrences begun
  uint32_t first_step = 0;      // of the open window
  // The NVTX range (capture range or step) in progress: one at a time.
  bool range_active = false;
  bool range_push = false;
  uint64_t range_domain = 0;
  uint64_t range_key = 0;
  // NVTX names: the domain handle of the armed domain (0: default) and
  // registered strings whose text is the armed name.
  bool domain_known = false;
  uint64_t domain = 0;
  uint64_t registered[kMaxRegisteredStrings] = {};
  std::vector<Pending>* pending = nullptr;
};
Control g;

uint32_t trigger_name_string = 0;  // interned by the writer task

void push_pending(const void* record, uint16_t bytes) {
  try {
    if (g.pending == nullptr) g.pending = new std::vector<Pending>();
    Pending p;
    p.bytes.assign(static_cast<const uint8_t*>(record), static_cast<const uint8_t*>(record) + bytes);
    g.pending->push_back(std::move(p));
  } catch (...) {
  }
}

uint64_t g_carry_ns = 0;  // the opening window's time, for carry()

// Carried records: the kApiCarried flag and the window's start as their span.
void carry(const void* record, uint16_t bytes) {
  try {
    Pending p;
    p.bytes.assign(static_cast<const uint8_t*>(record), static_cast<const uint8_t*>(record) + bytes);
    if (!mark_carried(p.bytes.data(), bytes, g_carry_ns)) return;
    if (g.pending == nullptr) g.pending = new std::vector<Pending>();
    g.pending->push_back(std::move(p));
  } catch (...) {
  }
}

void window_record(format::CaptureWindowAction action, CaptureTrigger trigger, uint64_t at_ns, uint32_t step) {
  format::CaptureWindowRecord r{};
  r.header = format::header_for<format::CaptureWindowRecord>();
  r.index = g.windows - 1;
  r.at_ns = at_ns;
  r.action = static_cast<uint8_t>(action);
  r.trigger = static_cast<uint8_t>(trigger);
  r.step = step;
  // name_string: filled by the writer task for NVTX and step triggers.
  push_pending(&r, sizeof r);
}

bool names_trigger(CaptureTrigger trigger) {
  return trigger == CaptureTrigger::kNvtxRange || trigger == CaptureTrigger::kStep;
}

// Under g.mutex. Each returns whether the state changed.
bool open_locked(CaptureTrigger trigger, uint32_t step) {
  if (g.window || g.done) return false;
  // The window's begin is read before recording resumes: a hook that sees
  // it on reads its call's begin after that, so every call in the window
  // begins in it (the work below took 0.36 ms once under TSan, and a call
  // recorded in that gap began before the window).
  const uint64_t opened_ns = now_ns();
  if (!runtime::resume_recording()) return false;
  // What was called while paused is written with the window (early_counts.h).
  count_while_paused(false);
  release_counts_while_paused();
  g.window = true;
  ++g.windows;
  g.opened_ns = opened_ns;
  g.first_step = step;
  window_record(format::CaptureWindowAction::kBegin, trigger, g.opened_ns, step);
  g_carry_ns = g.opened_ns;
  for (const format::MemoryOperationRecord& block : live_blocks()) carry(&block, sizeof block);
  run_carry_listeners(carry);
  return true;
}

bool close_locked(CaptureTrigger trigger, uint32_t step) {
  if (!g.window) return false;
  // While paused the hooks count the calls they pass through (early_counts.h).
  if (runtime::pause_recording()) count_while_paused(true);
  g.window = false;
  window_record(format::CaptureWindowAction::kEnd, trigger, now_ns(), step);
  const CaptureSpec& spec = *g.spec;
  const bool counted = spec.mode == CaptureMode::kProfilerApi || spec.mode == CaptureMode::kNvtxRange;
  if (counted && spec.repeat != 0 && g.windows >= spec.repeat) g.done = true;
  if (spec.mode == CaptureMode::kTimed) g.done = true;
  return true;
}

bool delay_passed_locked() {
  if (g.delay_fired) return true;
  if (now_ns() - g.start_ns < g.spec->delay_ns) return false;
  g.delay_fired = true;
  return true;
}

// The writer runs the tasks' records out and keeps the deadlines.
void after_change() {
  writer_ensure_started();
  writer_wake();
}

// ---- steps

// A step began (the k-th occurrence, from 0).
void step_begun_locked() {
  const CaptureSpec& s = *g.spec;
  const uint64_t k = g.steps++;
  const uint64_t cycle_length = uint64_t{s.wait} + s.warmup + s.active;
  const uint64_t cycle = k / cycle_length;
  const uint64_t position = k % cycle_length;
  const bool active = (s.cycles == 0 || cycle < s.cycles) && position >= uint64_t{s.wait} + s.warmup;
  if (active) {
    open_locked(CaptureTrigger::kStep, static_cast<uint32_t>(k));
  } else {
    close_locked(CaptureTrigger::kStep, static_cast<uint32_t>(k == 0 ? 0 : k - 1));
    if (s.cycles != 0 && cycle >= s.cycles) g.done = true;
  }
}

// The occurrence that began last ended (NVTX steps): the window closes
// after the last active step of its cycle.
void step_ended_locked() {
  const CaptureSpec& s = *g.spec;
  if (g.steps == 0) return;
  const uint64_t k = g.steps - 1;
  const uint64_t cycle_length = uint64_t{s.wait} + s.warmup + s.active;
  if (k % cycle_length == cycle_length - 1) {
    close_locked(CaptureTrigger::kStep, static_cast<uint32_t>(k));
    if (s.cycles != 0 && k / cycle_length + 1 >= s.cycles) g.done = true;
  }
}

// ---- the writer task

void task_before_drain() noexcept {}

void task_run(WriterRecordSink& sink, bool /*final*/) noexcept {
  std::vector<Pending>* records = nullptr;
  {
    std::lock_guard lock(g.mutex);
    if (g.spec != nullptr && g.spec->mode != CaptureMode::kAlways) {
      const CaptureSpec& s = *g.spec;
      // --delay alone: the window opens when it elapses.
      if (s.mode == CaptureMode::kTimed && !g.window && !g.done && delay_passed_locked())
        open_locked(s.delay_ns != 0 ? CaptureTrigger::kDelay : CaptureTrigger::kStart, 0);
      if (g.window && s.duration_ns != 0 && now_ns() - g.opened_ns >= s.duration_ns)
        close_locked(CaptureTrigger::kDuration, 0);
      if (g.window && g.request_close_ns != 0 && now_ns() >= g.request_close_ns) {
        g.request_close_ns = 0;
        close_locked(CaptureTrigger::kRequest, 0);
      }
    }
    records = g.pending;
    g.pending = nullptr;
  }
  if (records == nullptr) return;
  for (Pending& p : *records) {
    uint16_t kind;
    std::memcpy(&kind, p.bytes.data(), sizeof kind);
    if (kind == static_cast<uint16_t>(format::RecordKind::kCaptureWindow)) {
      auto* r = reinterpret_cast<format::CaptureWindowRecord*>(p.bytes.data());
      if (names_trigger(static_cast<CaptureTrigger>(r->trigger)) && g.spec != nullptr && g.spec->name[0] != '\0') {
        if (trigger_name_string == 0) trigger_name_string = intern_string(g.spec->name);
        r->name_string = trigger_name_string;
      }
    }
    // A carried record names the API that made its object.
    define_api_of_record(p.bytes.data(), static_cast<uint16_t>(p.bytes.size()));
    sink.append(p.bytes.data(), static_cast<uint16_t>(p.bytes.size()));
  }
  delete records;
}

void task_reset_in_child() noexcept {}

const WriterTask kTask{task_before_drain, task_run, task_reset_in_child};

// Whether the writer must run for the deadlines alone (no record to start it).
bool needs_timer(const CaptureSpec& spec) {
  return spec.mode == CaptureMode::kTimed && spec.delay_ns != 0;
}

}  // namespace

bool starts_paused(const CaptureSpec& spec) noexcept { return spec.mode != CaptureMode::kAlways; }

void start(const CaptureSpec& spec) noexcept {
  if (spec.mode == CaptureMode::kAlways) return;
  {
    std::lock_guard lock(g.mutex);
    g.spec = &spec;
    g.start_ns = now_ns();
  }
  writer_register_task(&kTask);
  enable_live_set();
  uint32_t armed_bits = 0;
  if (spec.mode == CaptureMode::kProfilerApi) armed_bits |= kArmedProfilerApi;
  if (spec.mode == CaptureMode::kNvtxRange || (spec.mode == CaptureMode::kSteps && spec.step_source == StepSource::kNvtx))
    armed_bits |= kArmedNvtx;
  if (spec.mode == CaptureMode::kSteps && spec.step_source == StepSource::kKernel) armed_bits |= kArmedKernelStep;
  g_armed.store(armed_bits, std::memory_order_release);
  if (spec.mode == CaptureMode::kTimed && spec.delay_ns == 0) {
    std::lock_guard lock(g.mutex);
    g.delay_fired = true;
    open_locked(CaptureTrigger::kStart, 0);
  }
  // The writer keeps the clock (--delay, --duration): it starts now when
  // nothing else would start it.
  if (needs_timer(spec)) writer_ensure_started();
}

void profiler_api(bool start) noexcept {
  bool changed = false;
  {
    std::lock_guard lock(g.mutex);
    if (g.spec == nullptr || g.spec->mode != CaptureMode::kProfilerApi) return;
    if (start) changed = delay_passed_locked() && open_locked(CaptureTrigger::kProfilerApi, 0);
    else changed = close_locked(CaptureTrigger::kProfilerApi, 0);
  }
  if (changed) after_change();
}

void nvtx_domain_created(uint64_t domain, std::string_view name) noexcept {
  if (!armed(kArmedNvtx)) return;
  std::lock_guard lock(g.mutex);
  if (g.spec == nullptr || g.spec->domain[0] == '\0' || g.domain_known) return;
  if (name == g.spec->domain) {
    g.domain = domain;
    g.domain_known = true;
  }
}

void nvtx_string_registered(uint64_t domain, uint64_t handle, std::string_view text) noexcept {
  if (!armed(kArmedNvtx)) return;
  std::lock_guard lock(g.mutex);
  if (g.spec == nullptr || text != g.spec->name) return;
  (void)domain;
  for (uint64_t& slot : g.registered) {
    if (slot == 0) {
      slot = handle;
      return;
    }
  }
}

bool nvtx_matches(uint64_t domain, std::string_view text, uint64_t registered_handle) noexcept {
  const CaptureSpec* spec = g.spec;
  if (spec == nullptr) return false;
  // The default domain is 0; a named domain matches once it was created.
  if (spec->domain[0] == '\0') {
    if (domain != 0) return false;
  } else {
    std::lock_guard lock(g.mutex);
    if (!g.domain_known || domain != g.domain) return false;
  }
  if (registered_handle != 0) {
    std::lock_guard lock(g.mutex);
    for (uint64_t slot : g.registered)
      if (slot != 0 && slot == registered_handle) return true;
    return false;
  }
  return text == spec->name;
}

uint64_t push_key(int level) noexcept {
  static thread_local uint32_t tid = 0;  // gettid is a system call: once per thread
  if (tid == 0) tid = static_cast<uint32_t>(gettid());
  return (static_cast<uint64_t>(tid) << 32) | static_cast<uint32_t>(level);
}

bool range_in_progress() noexcept { return g_range_in_progress.load(std::memory_order_acquire); }

void nvtx_range_begun(uint64_t domain, uint64_t key, bool push) noexcept {
  bool changed = false;
  {
    std::lock_guard lock(g.mutex);
    if (g.spec == nullptr || g.range_active || g.done || !delay_passed_locked()) return;
    g.range_active = true;
    g_range_in_progress.store(true, std::memory_order_release);
    g.range_push = push;
    g.range_domain = domain;
    g.range_key = key;
    if (g.spec->mode == CaptureMode::kNvtxRange) changed = open_locked(CaptureTrigger::kNvtxRange, 0);
    else if (g.spec->mode == CaptureMode::kSteps) {
      const bool was_open = g.window;
      step_begun_locked();
      changed = was_open != g.window || g.window;
    }
  }
  if (changed) after_change();
}

void nvtx_range_ended(uint64_t domain, uint64_t key, bool push) noexcept {
  bool changed = false;
  {
    std::lock_guard lock(g.mutex);
    if (g.spec == nullptr || !g.range_active || g.range_push != push || g.range_domain != domain || g.range_key != key)
      return;
    g.range_active = false;
    g_range_in_progress.store(false, std::memory_order_release);
    if (g.spec->mode == CaptureMode::kNvtxRange) changed = close_locked(CaptureTrigger::kNvtxRange, 0);
    else if (g.spec->mode == CaptureMode::kSteps) {
      const bool was_open = g.window;
      step_ended_locked();
      changed = was_open != g.window;
    }
  }
  if (changed) after_change();
}

bool kernel_name_matches(const char* name) noexcept {
  const CaptureSpec* spec = g.spec;
  if (spec == nullptr || name == nullptr) return false;
  if (std::strcmp(name, spec->name) == 0) return true;
  // A mangled name holds the function's name as <length><name>: a C++
  // kernel matches by its plain name (void step<float>(float*) by "step").
  char encoded[kMaxCaptureNameBytes + 8];
  const int n = std::snprintf(encoded, sizeof encoded, "%zu%s", std::strlen(spec->name), spec->name);
  if (n <= 0 || std::strncmp(name, "_Z", 2) != 0) return false;
  const char* at = std::strstr(name, encoded);
  // Not the tail of a longer number (e.g. 12step inside 112step).
  return at != nullptr && !(at > name && at[-1] >= '0' && at[-1] <= '9');
}

void kernel_step() noexcept {
  bool changed = false;
  {
    std::lock_guard lock(g.mutex);
    if (g.spec == nullptr || g.done || !delay_passed_locked()) return;
    const bool was_open = g.window;
    step_begun_locked();
    changed = was_open != g.window || g.window;
  }
  if (changed) after_change();
}

void request_start(uint64_t duration_ns) noexcept {
  std::lock_guard lock(g.mutex);
  if (g.spec == nullptr || g.spec->mode != CaptureMode::kIdle) return;
  open_locked(CaptureTrigger::kRequest, 0);
  g.request_close_ns = g.window && duration_ns != 0 ? g.opened_ns + duration_ns : 0;
}

void request_stop() noexcept {
  std::lock_guard lock(g.mutex);
  if (g.spec == nullptr || g.spec->mode != CaptureMode::kIdle) return;
  g.request_close_ns = 0;
  close_locked(CaptureTrigger::kRequest, 0);
}

void before_section_end(format::CaptureTrigger reason) noexcept {
  std::lock_guard lock(g.mutex);
  if (g.spec == nullptr || !g.window) return;
  // The state stays as it is (exit finishes it; a failed exec continues):
  // only the section's window ends.
  window_record(format::CaptureWindowAction::kEnd, reason, now_ns(), 0);
}

void lock_before_fork() noexcept {
  g.mutex.lock();
  live_set_lock_before_fork();
}

void unlock_after_fork_in_parent() noexcept {
  live_set_unlock_after_fork();
  g.mutex.unlock();
}

void after_fork_in_child() noexcept {
  // The parent's pending records are its own, and so is its device memory
  // (a fork child cannot use its parent's CUDA context): the child follows
  // its own allocations from nothing.
  live_set_reset_in_child();
  if (g.pending != nullptr) g.pending->clear();
  if (g.spec != nullptr && g.window) {
    g.opened_ns = now_ns();
    window_record(format::CaptureWindowAction::kBegin, CaptureTrigger::kFork, g.opened_ns, 0);
  }
  live_set_unlock_after_fork();
  g.mutex.unlock();
  if (g.spec != nullptr && (g.window || needs_timer(*g.spec))) writer_ensure_started();
}

}  // namespace proflaunch::capture
