// Capture windows: when the shim records. Outside a window the runtime is
// paused (state/runtime_state.h): hooks pass through as when off, nothing is written,
// and the state later windows need is kept (live memory: capture/live_set.h;
// the state carried into each window: capture/carried_state.h).
//
// Windows open and close at the events the capture options name
// (capture/capture_spec.h): cuProfilerStart/Stop, an NVTX range, the steps of
// --steps, the --delay and --duration deadlines, a request (proflaunch ctl).
// The trigger calls below are made by the hooks that see those events; each
// is cheap when its trigger is not armed. The state change is immediate
// (the event that opens a window is recorded in it, the one that closes it
// too); the window's records are written by the writer thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "formats/records.h"
#include "preload/capture/capture_spec.h"

namespace proflaunch::capture {

// Whether the process starts outside a window.
bool starts_paused(const CaptureSpec& spec) noexcept;

// After the runtime's state is set (runtime::start).
void start(const CaptureSpec& spec) noexcept;

// Armed triggers (bits), read by hooks before anything else.
enum Armed : uint32_t {
  kArmedProfilerApi = 1u << 0,
  kArmedNvtx = 1u << 1,
  kArmedKernelStep = 1u << 2,
};
extern std::atomic<uint32_t> g_armed;
inline bool armed(Armed what) noexcept { return (g_armed.load(std::memory_order_relaxed) & what) != 0; }

// cuProfilerStart (true) / cuProfilerStop (false) and the runtime's.
void profiler_api(bool start) noexcept;

// NVTX (capture range or step range). Domains and registered strings are
// matched by name when created. A range begins with push (thread, domain,
// level) or start (id) and ends with the matching pop or end.
void nvtx_domain_created(uint64_t domain, std::string_view name) noexcept;
void nvtx_string_registered(uint64_t domain, uint64_t handle, std::string_view text) noexcept;
// Whether a range's message names the armed range.
bool nvtx_matches(uint64_t domain, std::string_view text, uint64_t registered_handle) noexcept;
void nvtx_range_begun(uint64_t domain, uint64_t range_key, bool push) noexcept;
void nvtx_range_ended(uint64_t domain, uint64_t range_key, bool push) noexcept;
// The key of a push/pop range: its thread and level.
uint64_t push_key(int level) noexcept;
// Whether an armed range has begun and not ended (read before every pop/end).
extern std::atomic<bool> g_range_in_progress;
bool range_in_progress() noexcept;

// kernel:NAME steps: whether a kernel's (mangled) name is the step kernel,
// and a launch of it (a step boundary).
bool kernel_name_matches(const char* name) noexcept;
void kernel_step() noexcept;

// proflaunch ctl start / stop (--idle only; elsewhere ignored): a window
// opens now and closes on stop, or after `duration_ns` when not 0.
void request_start(uint64_t duration_ns) noexcept;
void request_stop() noexcept;

// The section ends (exit, exec) with the window open: its end record.
void before_section_end(format::CaptureTrigger reason) noexcept;
// fork: the child's section starts inside the parent's open window.
void lock_before_fork() noexcept;
void unlock_after_fork_in_parent() noexcept;
void after_fork_in_child() noexcept;

}  // namespace proflaunch::capture
