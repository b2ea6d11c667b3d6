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

// One more call of `api` before the start (any thread; cold: once per call
// made before main, with a clock read).
void count_before_start(uint16_t api) noexcept;

// The start ran: later calls are the rows' business.
void end_counting_before_start() noexcept;

// Whether anything was counted and not yet taken (the writer, every flush).
bool has_counts_before_start() noexcept;

// Hands every count not yet taken to `sink` and zeroes it (writer only).
struct EarlyCount {
  uint32_t tid;       // the thread that made the first counted call
  uint16_t api;
  uint64_t count;
  uint64_t first_ns;  // CLOCK_MONOTONIC of the first call (any API)
  uint64_t last_ns;   // of the last one (any API)
};
using EarlyCountSink = void (*)(const EarlyCount& count, void* context);
void take_counts_before_start(EarlyCountSink sink, void* context) noexcept;

// fork child: the parent writes what it counted.
void forget_counts_before_start_in_child() noexcept;

}  // namespace proflaunch
