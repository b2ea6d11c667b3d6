#include "preload/record/early_counts.h"

#include <unistd.h>

#include "preload/base/clock.h"
#include "preload/record/thread_buffer.h"

namespace proflaunch {
namespace early_counts_detail {
std::atomic<bool> g_open{true};
}  // namespace early_counts_detail

namespace {

using early_counts_detail::g_open;

// Static storage, zero before any constructor runs: usable from the first
// hook call of the process, before the shim's own constructor.
std::atomic<uint64_t> g_counts[kCountedApiSlots];
std::atomic<uint64_t> g_first_ns{0};
std::atomic<uint64_t> g_last_ns{0};
std::atomic<uint32_t> g_tid{0};
std::atomic<bool> g_pending{false};

}  // namespace

void count_before_start(uint16_t api) noexcept {
  // CLOCK_MONOTONIC, not ticks: the tick source is chosen by the start.
  const uint64_t now = now_ns();
  // The first time only falls and the last only grows, whatever order
  // threads get here in; both move before the count, so that a count the
  // writer takes is always inside them (release here, acquire there).
  uint64_t first = g_first_ns.load(std::memory_order_relaxed);
  while ((first == 0 || now < first) &&
         !g_first_ns.compare_exchange_weak(first, now, std::memory_order_relaxed)) {
  }
  if (first == 0) g_tid.store(static_cast<uint32_t>(gettid()), std::memory_order_relaxed);
  uint64_t last = g_last_ns.load(std::memory_order_relaxed);
  while (last < now && !g_last_ns.compare_exchange_weak(last, now, std::memory_order_relaxed)) {
  }
  g_counts[api & (kCountedApiSlots - 1)].fetch_add(1, std::memory_order_release);
  g_pending.store(true, std::memory_order_release);
}

void end_counting_before_start() noexcept { g_open.store(false, std::memory_order_relaxed); }

bool has_counts_before_start() noexcept { return g_pending.load(std::memory_order_acquire); }

void take_counts_before_start(EarlyCountSink sink, void* context) noexcept {
  if (!g_pending.exchange(false, std::memory_order_acquire)) return;
  const uint32_t tid = g_tid.load(std::memory_order_relaxed);
  for (uint32_t api = 0; api < kCountedApiSlots; ++api) {
    const uint64_t count = g_counts[api].exchange(0, std::memory_order_acquire);
    if (count == 0) continue;
    // Read after the count: every call it holds moved the times first.
    const uint64_t first = g_first_ns.load(std::memory_order_relaxed);
    const uint64_t last = g_last_ns.load(std::memory_order_relaxed);
    sink(EarlyCount{tid != 0 ? tid : static_cast<uint32_t>(getpid()), static_cast<uint16_t>(api), count,
                    first, last != 0 ? last : first},
         context);
  }
}

void forget_counts_before_start_in_child() noexcept {
  for (auto& count : g_counts) count.store(0, std::memory_order_relaxed);
  g_pending.store(false, std::memory_order_relaxed);
}

}  // namespace proflaunch
