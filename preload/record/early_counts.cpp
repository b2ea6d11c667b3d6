#include "preload/record/early_counts.h"

#include <unistd.h>

#include <mutex>
#include <new>

#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/record/thread_buffer.h"
#include "preload/state/runtime_state.h"

namespace proflaunch {
namespace early_counts_detail {
std::atomic<bool> g_open{true};
}  // namespace early_counts_detail

namespace {

using early_counts_detail::g_open;

// Calls of every API counted with the exact time of the first and the last
// (of any API) and the thread that made the first. Static storage, zero
// before any constructor runs: usable from the first hook call of the
// process, before the shim's own constructor.
struct CallCounts {
  std::atomic<uint64_t> counts[kCountedApiSlots];
  std::atomic<uint64_t> first_ns;
  std::atomic<uint64_t> last_ns;
  std::atomic<uint32_t> tid;
  std::atomic<bool> pending;

  // The first time only falls and the last only grows, whatever order
  // threads get here in; both move before the count, so that a count taken
  // is always inside them (release here, acquire there).
  void widen(uint64_t first, uint64_t last, uint32_t first_tid) noexcept {
    uint64_t was = first_ns.load(std::memory_order_relaxed);
    while ((was == 0 || first < was) && !first_ns.compare_exchange_weak(was, first, std::memory_order_relaxed)) {
    }
    if (was == 0 || first < was) tid.store(first_tid, std::memory_order_relaxed);
    was = last_ns.load(std::memory_order_relaxed);
    while (was < last && !last_ns.compare_exchange_weak(was, last, std::memory_order_relaxed)) {
    }
  }

  void add(uint16_t api, uint64_t count) noexcept {
    counts[api & (kCountedApiSlots - 1)].fetch_add(count, std::memory_order_release);
    pending.store(true, std::memory_order_release);
  }

  void count(uint16_t api) noexcept {
    // CLOCK_MONOTONIC, not ticks: the tick source is chosen by the start.
    const uint64_t now = now_ns();
    widen(now, now, static_cast<uint32_t>(gettid()));
    add(api, 1);
  }

  // Every count to `each(api, count, first_ns, last_ns, tid)`, zeroed.
  template <typename Each>
  void take(Each&& each) noexcept {
    if (!pending.exchange(false, std::memory_order_acquire)) return;
    const uint32_t first_tid = tid.load(std::memory_order_relaxed);
    for (uint32_t api = 0; api < kCountedApiSlots; ++api) {
      const uint64_t n = counts[api].exchange(0, std::memory_order_acquire);
      if (n == 0) continue;
      // Read after the count: every call it holds moved the times first.
      const uint64_t first = first_ns.load(std::memory_order_relaxed);
      const uint64_t last = last_ns.load(std::memory_order_relaxed);
      each(static_cast<uint16_t>(api), n, first, last != 0 ? last : first,
           first_tid != 0 ? first_tid : static_cast<uint32_t>(getpid()));
    }
  }

  void forget() noexcept {
    for (auto& n : counts) n.store(0, std::memory_order_relaxed);
    first_ns.store(0, std::memory_order_relaxed);
    last_ns.store(0, std::memory_order_relaxed);
    tid.store(0, std::memory_order_relaxed);
    pending.store(false, std::memory_order_relaxed);
  }
};

CallCounts g_before_start;
// Calls made while paused, counted until a window opens, then moved to the
// released counts the writer takes.
CallCounts g_while_paused;
CallCounts g_released;
// Guards g_released between a window's release and the writer's take (both
// cold: once per window opened, once per flush with something released).
std::mutex g_released_mutex;
std::atomic<bool> g_started{false};  // the start ran: g_open now means "paused"

}  // namespace

void count_unrecorded_call(uint16_t api) noexcept {
  if (!g_started.load(std::memory_order_relaxed)) {
    g_before_start.count(api);
    return;
  }
  // The profiler's own calls (its threads, its event queries) are not the
  // program's; a call whose row opened a window (cudaProfilerStart) was
  // recorded.
  if (inside_profiler() || runtime::recording()) return;
  g_while_paused.count(api);
}

void end_counting_before_start() noexcept {
  g_started.store(true, std::memory_order_relaxed);
  g_open.store(false, std::memory_order_relaxed);
}

void count_while_paused(bool paused) noexcept {
  if (g_started.load(std::memory_order_relaxed)) g_open.store(paused, std::memory_order_relaxed);
}

void release_counts_while_paused() noexcept {
  // A call that read "paused" just before the window opened may still be
  // counting: its count goes with the next window's release, its times are
  // left in place (the next release's window then starts earlier: still a
  // true bound).
  std::lock_guard lock(g_released_mutex);
  uint64_t first = 0, last = 0;
  uint32_t tid = 0;
  bool any = false;
  g_while_paused.take([&](uint16_t api, uint64_t n, uint64_t first_ns, uint64_t last_ns, uint32_t first_tid) {
    first = first_ns, last = last_ns, tid = first_tid, any = true;
    g_released.add(api, n);
  });
  if (!any) return;
  uint64_t expected = first;
  g_while_paused.first_ns.compare_exchange_strong(expected, 0, std::memory_order_relaxed);
  expected = last;
  g_while_paused.last_ns.compare_exchange_strong(expected, 0, std::memory_order_relaxed);
  g_released.widen(first, last, tid);
}

bool has_counts_before_start() noexcept {
  return g_before_start.pending.load(std::memory_order_acquire) || g_released.pending.load(std::memory_order_acquire);
}

void take_counts_before_start(EarlyCountSink sink, void* context) noexcept {
  auto each = [&](uint16_t api, uint64_t n, uint64_t first, uint64_t last, uint32_t tid) {
    sink(EarlyCount{tid, api, n, first, last}, context);
  };
  g_before_start.take(each);
  // Released counts: their times are reset once handed over, so that each
  // window's release bounds its own calls.
  if (!g_released.pending.load(std::memory_order_acquire)) return;
  std::lock_guard lock(g_released_mutex);
  g_released.take(each);
  g_released.first_ns.store(0, std::memory_order_relaxed);
  g_released.last_ns.store(0, std::memory_order_relaxed);
}

void forget_counts_before_start_in_child() noexcept {
  g_before_start.forget();
  g_while_paused.forget();
  g_released.forget();
  new (&g_released_mutex) std::mutex();
}

}  // namespace proflaunch
