#include "preload/cuda/pending_operations.h"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <new>

namespace proflaunch::cuda {

// 4096 operations: 40 ms of back-to-back 10 us launches, four times the
// writer's drain period.
constexpr uint64_t kRingOperations = 4096;

struct PendingRing {
  std::atomic<uint64_t> head{0};  // producer
  std::atomic<uint64_t> tail{0};  // writer
  uint64_t snapshot = 0;          // writer
  std::atomic<bool> owned{true};
  PendingRing* next = nullptr;
  PendingOperation operations[kRingOperations];
};

namespace {

std::atomic<PendingRing*> g_rings{nullptr};
std::atomic<uint64_t> g_overflow{0};
__thread __attribute__((tls_model("initial-exec"))) PendingRing* tls_ring;

pthread_key_t g_exit_key;
pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

void release_ring_at_thread_exit(void* ring) {
  static_cast<PendingRing*>(ring)->owned.store(false, std::memory_order_release);
}

void create_key() { pthread_key_create(&g_exit_key, release_ring_at_thread_exit); }

PendingRing* adopt_or_map_ring() {
  pthread_once(&g_key_once, create_key);
  for (PendingRing* ring = g_rings.load(std::memory_order_acquire); ring; ring = ring->next) {
    bool expected = false;
    if (ring->head.load(std::memory_order_acquire) == ring->tail.load(std::memory_order_acquire) &&
        ring->owned.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
      pthread_setspecific(g_exit_key, ring);
      return ring;
    }
  }
  void* memory = mmap(nullptr, sizeof(PendingRing), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  auto* ring = new (memory) PendingRing();
  PendingRing* head = g_rings.load(std::memory_order_relaxed);
  do {
    ring->next = head;
  } while (!g_rings.compare_exchange_weak(head, ring, std::memory_order_release, std::memory_order_relaxed));
  pthread_setspecific(g_exit_key, ring);
  return ring;
}

}  // namespace

bool push_pending_operation(const PendingOperation& operation) noexcept {
  PendingRing* ring = tls_ring;
  if (__builtin_expect(ring == nullptr, 0)) {
    ring = tls_ring = adopt_or_map_ring();
    if (ring == nullptr) {
      g_overflow.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  const uint64_t head = ring->head.load(std::memory_order_relaxed);
  if (head - ring->tail.load(std::memory_order_acquire) >= kRingOperations) {
    g_overflow.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ring->operations[head % kRingOperations] = operation;
  ring->head.store(head + 1, std::memory_order_release);
  return true;
}

void snapshot_pending_operations() noexcept {
  for (PendingRing* ring = first_pending_ring(); ring; ring = ring->next)
    ring->snapshot = ring->head.load(std::memory_order_acquire);
}

void count_untimed_operation() noexcept { g_overflow.fetch_add(1, std::memory_order_relaxed); }

uint64_t take_queue_overflow_count() noexcept { return g_overflow.exchange(0, std::memory_order_acq_rel); }

void reset_pending_operations_after_fork() noexcept {
  // The parent's rings stay mapped in the child but are never used again.
  g_rings.store(nullptr, std::memory_order_release);
  g_overflow.store(0, std::memory_order_relaxed);
  tls_ring = nullptr;
}

PendingRing* first_pending_ring() noexcept { return g_rings.load(std::memory_order_acquire); }
PendingRing* next_pending_ring(PendingRing* ring) noexcept { return ring->next; }

const PendingOperation* peek_pending(PendingRing* ring) noexcept {
  const uint64_t tail = ring->tail.load(std::memory_order_relaxed);
  if (tail == ring->snapshot) return nullptr;
  return &ring->operations[tail % kRingOperations];
}

void pop_pending(PendingRing* ring) noexcept {
  ring->tail.store(ring->tail.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

}  // namespace proflaunch::cuda
