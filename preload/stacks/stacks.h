// Call stacks for events: what a hook calls after committing its record.
//
//   if (auto* record = emit<format::KernelLaunchRecord>()) {
//     ...
//     commit();
//     stacks::attach_stacks(record_correlation_id, format::StackPoint::kLaunch);
//   }
//
// attach_stacks() takes the calling thread's native stack (libunwind's
// unw_backtrace) and, when the thread runs Python code, its Python stack; looks
// each up in a lock-free table of stacks already defined; and emits a
// CallStack record with their ids right after the event, in the same ring.
// A stack seen for the first time takes the cold path once (a mutex, the
// module map, a definition record). Any hook may call it: launches, copies,
// memsets, syncs, allocations. Call it only after commit() (it emits).
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/config.h"

namespace proflaunch::stacks {

// Config::stack_points once the stacks started (0 before, and when off).
// Bit n is StackPoint n.
extern uint32_t g_enabled_points;

void capture_and_emit(uint64_t correlation_id, format::StackPoint point) noexcept;

inline bool stacks_enabled(format::StackPoint point) noexcept {
  return ((g_enabled_points >> static_cast<unsigned>(point)) & 1u) != 0;
}

inline void attach_stacks(uint64_t correlation_id, format::StackPoint point) noexcept {
  if (stacks_enabled(point)) capture_and_emit(correlation_id, point);
}

// At load, after the runtime started recording: loads libunwind, finds the
// Python interpreter, writes the first module map, registers the writer task
// and fork handlers. With `config.stack_points == 0` it does nothing.
void start_stacks(const Config& config) noexcept;

}  // namespace proflaunch::stacks
