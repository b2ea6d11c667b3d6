#include "preload/cuda/gpu_clock.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <new>

#include "preload/base/clock.h"
#include "preload/cuda/capture_state.h"
#include "preload/cuda/driver_services.h"

namespace proflaunch::cuda {
namespace {

constexpr uint64_t kAnchorRefreshNs = 1'000'000'000;
constexpr int kAnchorsKept = 16;
constexpr int kMaxContexts = 64;

struct Anchor {
  CUevent event;
  uint64_t host_ns;       // estimated host time of the anchor's GPU timestamp
  uint64_t published_ns;  // host time it was known complete
};

struct ContextClock {
  CUcontext context = nullptr;
  uint32_t generation = 0;
  CUstream stream = nullptr;
  int count = 0;
  Anchor anchors[kAnchorsKept];  // oldest first
};

std::mutex g_mutex;
constinit ContextClock g_clocks[kMaxContexts]{};
uint32_t g_next_generation = 1;
std::atomic<uint64_t> g_epoch{1};  // bumped when a clock goes away

struct ThreadClockCache {
  CUcontext context;
  uint32_t generation;
  uint64_t epoch;
};
__thread __attribute__((tls_model("initial-exec"))) ThreadClockCache tls_clock;

ContextClock* find_clock(CUcontext context) {
  for (ContextClock& clock : g_clocks)
    if (clock.context == context && clock.generation != 0) return &clock;
  return nullptr;
}

// Where an anchor's GPU timestamp lies in host time. The event is recorded
// on the clock's idle private stream, so the device stamps it as soon as it
// reaches the command, right after the record call; the host learns of it
// only when the synchronize returns, which on a loaded machine takes tens of
// microseconds to milliseconds. The midpoint of the two would put every GPU
// time that much late (work ending after the blocking call that waited for
// it returned); the start of the record call is the better estimate, early
// by the submission latency only. Of a few tries the one with the shortest
// round trip is kept: a try the scheduler disturbed is the one to discard.
constexpr int kAnchorTries = 4;

// With the clock's context current on the calling thread and g_mutex held.
bool add_anchor(ContextClock& clock) {
  const DriverServices& driver = driver_services();
  // cuEventSynchronize is an unsafe call during a capture: relaxed, so it
  // cannot invalidate one (capture_state.h).
  RelaxedCaptureScope relaxed;
  if (driver.event_create == nullptr) return false;
  Anchor best{nullptr, 0, 0};
  uint64_t best_round_trip_ns = 0;
  for (int i = 0; i < kAnchorTries; ++i) {
    CUevent event = nullptr;
    if (driver.event_create(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) break;
    const uint64_t before = now_ns();
    if (driver.event_record(event, clock.stream) != CUDA_SUCCESS ||
        driver.event_synchronize(event) != CUDA_SUCCESS) {
      driver.event_destroy(event);
      break;
    }
    const uint64_t after = now_ns();
    if (best.event == nullptr || after - before < best_round_trip_ns) {
      if (best.event != nullptr) driver.event_destroy(best.event);
      best = Anchor{event, before, after};
      best_round_trip_ns = after - before;
    } else {
      driver.event_destroy(event);
    }
  }
  if (best.event == nullptr) return false;
  if (clock.count == kAnchorsKept) {
    driver.event_destroy(clock.anchors[0].event);
    for (int i = 1; i < kAnchorsKept; ++i) clock.anchors[i - 1] = clock.anchors[i];
    --clock.count;
  }
  clock.anchors[clock.count++] = best;
  return true;
}

}  // namespace

uint32_t ensure_context_clock(CUcontext context) noexcept {
  ThreadClockCache& cache = tls_clock;
  const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (cache.context == context && cache.epoch == epoch && cache.generation != 0) return cache.generation;

  std::lock_guard<std::mutex> lock(g_mutex);
  ContextClock* clock = find_clock(context);
  if (clock == nullptr) {
    for (ContextClock& candidate : g_clocks) {
      if (candidate.generation == 0) {
        clock = &candidate;
        break;
      }
    }
    if (clock == nullptr) return 0;
    const DriverServices& driver = driver_services();
    CUstream stream = nullptr;
    if (!has_event_timing(driver) || driver.stream_create(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
      return 0;
    *clock = ContextClock{};
    clock->context = context;
    clock->stream = stream;
    if (!add_anchor(*clock)) {
      driver.stream_destroy(stream);
      *clock = ContextClock{};
      return 0;
    }
    clock->generation = g_next_generation++;
  }
  cache = ThreadClockCache{context, clock->generation, epoch};
  return clock->generation;
}

bool resolve_operation_times(CUcontext context, uint32_t generation, CUevent start, CUevent end,
                             uint64_t submitted_ns, ResolvedTimes* times) noexcept {
  Anchor anchor;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    const ContextClock* clock = find_clock(context);
    if (clock == nullptr || clock->generation != generation || clock->count == 0) return false;
    anchor = clock->anchors[0];
    for (int i = clock->count - 1; i >= 0; --i) {
      if (clock->anchors[i].published_ns <= submitted_ns) {
        anchor = clock->anchors[i];
        break;
      }
    }
  }
  const DriverServices& driver = driver_services();
  float since_anchor_ms = 0, duration_ms = 0;
  if (driver.event_elapsed_time == nullptr ||
      driver.event_elapsed_time(&since_anchor_ms, anchor.event, start) != CUDA_SUCCESS ||
      driver.event_elapsed_time(&duration_ms, start, end) != CUDA_SUCCESS)
    return false;
  const double since_anchor_ns = static_cast<double>(since_anchor_ms) * 1e6;
  // The start event was recorded at submitted_ns, so the device stamped it
  // no earlier: an anchor placing it before that is early itself (its tries
  // were all disturbed, on a loaded machine) by at least the difference.
  // Every such bound is true, so the anchor only moves toward its real time,
  // and no GPU work is ever placed before the call that submitted it.
  const double earliest_anchor_ns = static_cast<double>(submitted_ns) - since_anchor_ns;
  if (earliest_anchor_ns > static_cast<double>(anchor.host_ns)) {
    anchor.host_ns = static_cast<uint64_t>(earliest_anchor_ns);
    std::lock_guard<std::mutex> lock(g_mutex);
    if (ContextClock* clock = find_clock(context); clock != nullptr && clock->generation == generation) {
      for (int i = 0; i < clock->count; ++i)
        if (clock->anchors[i].event == anchor.event && clock->anchors[i].host_ns < anchor.host_ns)
          clock->anchors[i].host_ns = anchor.host_ns;
    }
  }
  const double start_ns = static_cast<double>(anchor.host_ns) + since_anchor_ns;
  times->start_ns = static_cast<uint64_t>(std::llround(start_ns));
  times->end_ns = times->start_ns + static_cast<uint64_t>(std::llround(std::fmax(0.0, duration_ms * 1e6)));
  return true;
}

void refresh_context_clocks(uint64_t now) noexcept {
  const DriverServices& driver = driver_services();
  std::lock_guard<std::mutex> lock(g_mutex);
  for (ContextClock& clock : g_clocks) {
    if (clock.generation == 0 || clock.count == 0) continue;
    if (now - clock.anchors[clock.count - 1].published_ns < kAnchorRefreshNs) continue;
    if (driver.ctx_set_current == nullptr || driver.ctx_set_current(clock.context) != CUDA_SUCCESS) continue;
    add_anchor(clock);
  }
}

bool context_clock_alive(CUcontext context, uint32_t generation) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  const ContextClock* clock = find_clock(context);
  return clock != nullptr && clock->generation == generation;
}

void forget_context_clock(CUcontext context) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (ContextClock* clock = find_clock(context)) *clock = ContextClock{};  // handles died with it
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

void reset_context_clocks_after_fork() noexcept {
  new (&g_mutex) std::mutex();
  for (ContextClock& clock : g_clocks) clock = ContextClock{};
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace proflaunch::cuda
