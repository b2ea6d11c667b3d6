// The shim's life cycle inside one process: start (at load), fork, exec,
// exit. It sets the state everyone reads (state/runtime_state.h) and calls
// the parts that must act at each step: the thread registry, the writer, the
// capture windows and the control page, the crash handlers.
//
// Initialization order (start):
//   1. configuration copied into static storage (no allocation)
//   2. parts directory checked: not usable -> one warning, pass-through
//   3. section identity (fresh, or continuing an exec'd image's parent)
//   4. thread registry (its drainer: the writer), fork handlers, crash
//      signal handlers
//   5. state = recording (or paused outside a capture window): threads may
//      attach from now on
// The writer thread starts later, on the first record (so processes that
// record nothing never run it and leave no part).
#pragma once

#include "preload/config.h"

namespace proflaunch::runtime {

// Runs the ladder above. Returns true when recording.
bool start(const Config& config) noexcept;

// Exit: final drain, SectionEnd, writer stops. Idempotent.
void finish() noexcept;

// exec: flush everything and end the section before the real exec; if the
// exec fails, continue in a new section.
void before_exec() noexcept;
void after_failed_exec() noexcept;

}  // namespace proflaunch::runtime
