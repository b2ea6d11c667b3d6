// The shim's life cycle inside one process: start (at load), fork, exec,
// exit. Holds the configuration and the current section.
//
// Initialization order (start):
//   1. configuration copied into static storage (no allocation)
//   2. parts directory checked: not usable -> one warning, pass-through
//   3. section identity (fresh, or continuing an exec'd image's parent)
//   4. thread-exit key, fork handlers, crash signal handlers
//   5. state = recording: threads may attach from now on
// The writer thread starts later, on the first record (so processes that
// record nothing never run it and leave no part).
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
  // Outside a capture window (capture/capture_control.h): hooks pass
  // through as when off, but the shim stays set up and keeps the state it
  // needs to record correctly when the next window opens (kernel names,
  // handed-out entry points, live memory, communicators, NVTX definitions).
  kPaused,
};

// Read on every hook: inline. Written by start() only, before recording.
extern Config g_config;
inline const Config& config() noexcept { return g_config; }
extern std::atomic<State> g_state;  // read through state(); written by runtime.cpp only
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

// Capture windows (only capture_control.cpp): kPaused <-> kRecording.
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

// Runs the ladder above. Returns true when recording.
bool start(const Config& config) noexcept;

// Exit: final drain, SectionEnd, writer stops. Idempotent.
void finish() noexcept;

// exec: flush everything and end the section before the real exec; if the
// exec fails, continue in a new section.
void before_exec() noexcept;
void after_failed_exec() noexcept;

}  // namespace proflaunch::runtime
