// State alive when a recording window opens, written at its start as
// carried records: a communicator made before the window (preload/nccl) is
// still the one its collectives use. Capture windows (control/
// capture_control.h) and the flight recorder's dumps (writer/
// flight_recorder_dump.h) both open windows, and both ask the listeners.
#pragma once

#include <cstdint>

namespace proflaunch::capture {

// A listener hands each record of the state it keeps to `carry` (a copy is
// taken). It runs on the thread opening the window: quick, and it must not
// record.
using CarryFn = void (*)(void (*carry)(const void* record, uint16_t bytes));

// For the life of the process (a few at most); adding one again is a no-op.
void add_carry_listener(CarryFn listener) noexcept;

// Every listener, with `carry`.
void run_carry_listeners(void (*carry)(const void* record, uint16_t bytes)) noexcept;

// Makes `record` (a copy, with an ApiSpan) a carried one: flag kApiCarried,
// its span at `at_ns`, no correlation. False when it has no ApiSpan.
bool mark_carried(void* record, uint16_t bytes, uint64_t at_ns) noexcept;

}  // namespace proflaunch::capture
