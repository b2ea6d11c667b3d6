// The state every part of the shim reads: the configuration, whether hooks
// record now, and the current section. Hooks read it on every call, so the
// readers are inline loads. Only the life cycle (process/lifecycle.h) and
// the capture windows (pause/resume) change it.
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/config.h"
#include "preload/state/section.h"

namespace proflaunch::runtime {

enum class State : uint8_t {
  kOff,        // not configured, or the configuration cannot work: pass-through
  kRecording,
  kFinished,   // exit in progress or done
  // Outside a capture window (control/capture_control.h): hooks pass
  // through as when off, but the shim stays set up and keeps the state it
  // needs to record correctly when the next window opens (kernel names,
  // handed-out entry points, live memory, communicators, NVTX definitions).
  kPaused,
};

// Read on every hook: inline. Written once by the life cycle's start,
// before recording.
extern Config g_config;
inline const Config& config() noexcept { return g_config; }
// Read through state(); changed by the life cycle and pause/resume only.
extern std::atomic<State> g_state;
inline State state() noexcept { return g_state.load(std::memory_order_acquire); }
// Whether hooks record now (inside a capture window).
inline bool recording() noexcept { return state() == State::kRecording; }
// Whether the shim is set up and following the program: recording, or
// paused between capture windows. What must stay right across windows
// (names, entry points, allocations) is kept while active.
inline bool active() noexcept {
  const State s = state();
  return s == State::kRecording || s == State::kPaused;
}

// Capture windows (only control/capture_control.cpp): kPaused <-> kRecording.
// False when the state was not the expected one (the process is exiting).
bool pause_recording() noexcept;
bool resume_recording() noexcept;

// The current section (copied: it changes after fork and after a failed exec).
SectionIdentity section() noexcept;
// Its id and pid, readable without a lock from any context (exec hooks in a
// vfork child, signal handlers).
uint64_t section_id() noexcept;
uint32_t section_pid() noexcept;

// True when this process is the one the runtime was set up for: false in a
// vfork child or a raw clone child, which share the parent's memory and must
// not touch the profiler's state.
bool owns_this_process() noexcept;

// ---- the life cycle's (process/lifecycle.cpp)

// A new current section: at start, after a failed exec.
void set_section(const SectionIdentity& section) noexcept;
// fork: the section lock is held from prepare to the parent's and the
// child's handlers; the child sets its new section under it.
void section_lock_before_fork() noexcept;
void section_unlock_after_fork() noexcept;
void set_section_in_fork_child(const SectionIdentity& section) noexcept;

}  // namespace proflaunch::runtime
