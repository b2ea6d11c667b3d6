#include "preload/cuda/gpu_clock.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <new>

#include "preload/base/clock.h"
#include "preload/base/event_anchors.h"
#include "preload/cuda/capture_state.h"
#include "preload/cuda/driver_services.h"

namespace proflaunch::cuda {
namespace {

constexpr int kAnchorsKept = 16;
constexpr int kMaxContexts = 64;

using Anchors = EventAnchors<CUevent, kAnchorsKept>;

struct ContextClock {
  CUcontext context = nullptr;
  uint32_t generation = 0;
  CUstream stream = nullptr;
  Anchors anchors;
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

// An anchor on the clock's idle private stream (base/event_anchors.h says
// where its time lies). With the clock's context current on the calling
// thread and g_mutex held.
bool add_anchor(ContextClock& clock) {
  const DriverServices& driver = driver_services();
  // cuEventSynchronize is an unsafe call during a capture: relaxed, so it
  // cannot invalidate one (capture_state.h).
  RelaxedCaptureScope relaxed;
  if (driver.event_create == nullptr) return false;
  Anchors::Anchor best{};
  const auto destroy = [&](CUevent event) { driver.event_destroy(event); };
  if (!take_anchor(
          best, [&](CUevent* event) { return driver.event_create(event, CU_EVENT_DEFAULT) == CUDA_SUCCESS; },
          [&](CUevent event) {
            return driver.event_record(event, clock.stream) == CUDA_SUCCESS &&
                   driver.event_synchronize(event) == CUDA_SUCCESS;
          },
          destroy, [] { return now_ns(); }))
    return false;
  if (CUevent evicted = clock.anchors.keep(best)) destroy(evicted);
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
  Anchors::Anchor anchor;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    const ContextClock* clock = find_clock(context);
    if (clock == nullptr || clock->generation != generation || clock->anchors.empty()) return false;
    anchor = clock->anchors.for_submission(submitted_ns);
  }
  const DriverServices& driver = driver_services();
  float since_anchor_ms = 0, duration_ms = 0;
  if (driver.event_elapsed_time == nullptr ||
      driver.event_elapsed_time(&since_anchor_ms, anchor.event, start) != CUDA_SUCCESS ||
      driver.event_elapsed_time(&duration_ms, start, end) != CUDA_SUCCESS)
    return false;
  const uint64_t anchor_was_ns = anchor.host_ns;
  times->start_ns = anchored_time(anchor.host_ns, static_cast<double>(since_anchor_ms) * 1e6, submitted_ns);
  if (anchor.host_ns != anchor_was_ns) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (ContextClock* clock = find_clock(context); clock != nullptr && clock->generation == generation)
      clock->anchors.raise(anchor.event, anchor.host_ns);
  }
  times->end_ns = times->start_ns + static_cast<uint64_t>(std::llround(std::fmax(0.0, duration_ms * 1e6)));
  return true;
}

void refresh_context_clocks(uint64_t now) noexcept {
  const DriverServices& driver = driver_services();
  std::lock_guard<std::mutex> lock(g_mutex);
  for (ContextClock& clock : g_clocks) {
    if (clock.generation == 0 || clock.anchors.empty() || !clock.anchors.due(now)) continue;
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
