#include "preload/cuda/event_pool.h"

#include <atomic>
#include <mutex>
#include <new>

#include "preload/cuda/driver_services.h"

namespace proflaunch::cuda {
namespace {

constexpr int kCacheEvents = 32;
constexpr int kMaxContexts = 64;
constexpr int kPoolEventsPerContext = 8192;
constexpr int kCreateBatch = 8;

struct ContextPool {
  CUcontext context = nullptr;
  int count = 0;
  CUevent events[kPoolEventsPerContext];
};

std::mutex g_mutex;
constinit ContextPool g_pools[kMaxContexts]{};
std::atomic<uint64_t> g_epoch{1};

struct ThreadCache {
  CUcontext context;
  uint64_t epoch;
  int count;
  CUevent events[kCacheEvents];
};
__thread __attribute__((tls_model("initial-exec"))) ThreadCache tls_cache;

ContextPool* pool_of(CUcontext context, bool create) {
  ContextPool* free_slot = nullptr;
  for (ContextPool& pool : g_pools) {
    if (pool.context == context) return &pool;
    if (pool.context == nullptr && free_slot == nullptr) free_slot = &pool;
  }
  if (!create || free_slot == nullptr) return nullptr;
  free_slot->context = context;
  free_slot->count = 0;
  return free_slot;
}

// Moves the cache's events back to the shared pool (context switch).
void spill_cache(ThreadCache& cache) {
  if (cache.count == 0) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  ContextPool* pool = pool_of(cache.context, true);
  while (pool != nullptr && cache.count > 0 && pool->count < kPoolEventsPerContext)
    pool->events[pool->count++] = cache.events[--cache.count];
  cache.count = 0;  // beyond the pool's capacity: leaked until the context goes
}

void refill_cache(ThreadCache& cache, CUcontext context) {
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (ContextPool* pool = pool_of(context, false)) {
      while (pool->count > 0 && cache.count < kCacheEvents)
        cache.events[cache.count++] = pool->events[--pool->count];
    }
  }
  const DriverServices& driver = driver_services();
  for (int i = 0; cache.count < 2 && i < kCreateBatch && driver.event_create != nullptr; ++i) {
    CUevent event = nullptr;
    if (driver.event_create(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) break;
    cache.events[cache.count++] = event;
  }
}

}  // namespace

bool take_event_pair(CUcontext context, CUevent* start, CUevent* end) noexcept {
  ThreadCache& cache = tls_cache;
  const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (cache.epoch != epoch) {
    cache.count = 0;  // a context died since: these handles may be gone
    cache.epoch = epoch;
    cache.context = context;
  }
  if (cache.context != context) {
    spill_cache(cache);
    cache.context = context;
  }
  if (cache.count < 2) refill_cache(cache, context);
  if (cache.count < 2) return false;
  *start = cache.events[--cache.count];
  *end = cache.events[--cache.count];
  return true;
}

void return_event_pair(CUcontext context, CUevent start, CUevent end) noexcept {
  ThreadCache& cache = tls_cache;
  if (cache.context == context && cache.count + 2 <= kCacheEvents) {
    cache.events[cache.count++] = start;
    cache.events[cache.count++] = end;
    return;
  }
  release_event(context, start);
  release_event(context, end);
}

void release_event(CUcontext context, CUevent event) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  ContextPool* pool = pool_of(context, true);
  if (pool != nullptr && pool->count < kPoolEventsPerContext) pool->events[pool->count++] = event;
}

void forget_context_events(CUcontext context) noexcept {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (ContextPool* pool = pool_of(context, false)) {
    pool->context = nullptr;
    pool->count = 0;
  }
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

void reset_event_pool_after_fork() noexcept {
  // Only the forking thread exists; the mutex may have been held by another
  // thread of the parent at fork time, so start over without touching it.
  new (&g_mutex) std::mutex();
  for (ContextPool& pool : g_pools) {
    pool.context = nullptr;
    pool.count = 0;
  }
  g_epoch.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace proflaunch::cuda
