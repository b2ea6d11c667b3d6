// Calls made before the shim started: the constructors of the libraries the
// program links run before the shim's own (glibc initializes dependencies
// first, and a preloaded library depends on none of them), so
// librocsparse's 12,344 __hipRegisterFunction calls, or a CUDA library's
// __cudaRegisterFunction, reach the hooks while there is no configuration,
// no section and no ring to record them in. They are counted here, per API,
// with the time of the first and the last, and the writer hands them over
// as ApiCount records of the thread that made the first of them.
//
// Counting stops when the life cycle's start has run (whatever it decided):
// from then on the rows record, count or pass through as configured.
//
// The same counts serve the calls made while recording is paused, outside
// every capture window (--capture-range, --delay, `ctl` idle): a library
// loaded then registers its kernels as librocsparse's constructors do before
// main. They are counted here with their own times too, and released to the
// writer when the next window opens (a window's trace then says what was
// called before it); calls after the last window are not written.
#pragma once

#include <atomic>
#include <cstdint>

namespace proflaunch {

namespace early_counts_detail {
extern std::atomic<bool> g_open;
}  // namespace early_counts_detail

// Whether calls are still counted here (before the life cycle's start).
// One relaxed load: read by every hook that does not record.
inline bool counting_before_start() noexcept {
  return early_counts_detail::g_open.load(std::memory_order_relaxed);
}

// One more call of `api` before the start, or while paused (any thread;
// cold: once per call the rows do not record, with a clock read).
void count_unrecorded_call(uint16_t api) noexcept;

// The start ran: later calls are the rows' business.
void end_counting_before_start() noexcept;

// Recording paused (true) or resumed (false) after the start: while paused,
// counting_before_start() is true again and calls count as paused ones.
void count_while_paused(bool paused) noexcept;

// A capture window opens: the calls counted while paused go to the writer
// with the next take (cold: once per window).
void release_counts_while_paused() noexcept;

// Whether anything was counted and not yet taken (the writer, every flush):
// before the start, or released by a window's opening.
bool has_counts_before_start() noexcept;

// Hands every count not yet taken to `sink` and zeroes it (writer only).
struct EarlyCount {
  uint32_t tid;       // the thread that made the first counted call
  uint16_t api;
  uint64_t count;
  uint64_t first_ns;  // CLOCK_MONOTONIC of the first call (any API) of the same release
  uint64_t last_ns;   // of the last one (any API)
};
using EarlyCountSink = void (*)(const EarlyCount& count, void* context);
void take_counts_before_start(EarlyCountSink sink, void* context) noexcept;

// fork child: the parent writes what it counted.
void forget_counts_before_start_in_child() noexcept;

}  // namespace proflaunch
