#include "preload/record/thread_registry.h"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <mutex>

#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/base/log.h"
#include "preload/record/definitions.h"
#include "preload/state/runtime_state.h"

namespace proflaunch {

__thread __attribute__((tls_model("initial-exec"))) ThreadBuffer* tls_thread_buffer = nullptr;
__thread __attribute__((tls_model("initial-exec"))) uint64_t tls_next_correlation_id = 0;

namespace {

std::mutex g_registry_mutex;
std::atomic<RegisteredBuffer*> g_first{nullptr};
pthread_key_t g_thread_exit_key;
bool g_key_created = false;
RingDrainer g_drainer{nullptr, nullptr};

// Set when attaching failed on this thread, so the slow path is not retried
// (and a warning is not repeated) on every record.
__thread __attribute__((tls_model("initial-exec"))) bool tls_cannot_record = false;

constexpr uint64_t kPageBytes = 4096;

RegisteredBuffer* owner_of(ThreadBuffer* ring) {
  // `ring` is the first member of RegisteredBuffer.
  return reinterpret_cast<RegisteredBuffer*>(ring);
}

// pthread key destructor: runs on the exiting thread after its last record.
// The writer drains what is left, then unmaps the buffer.
void on_thread_exit(void* value) {
  auto* ring = static_cast<ThreadBuffer*>(value);
  if (ring == nullptr) return;
  if (tls_thread_buffer == ring) tls_thread_buffer = nullptr;
  owner_of(ring)->retired.store(true, std::memory_order_release);
  if (g_drainer.thread_exited != nullptr) g_drainer.thread_exited();
}

}  // namespace

uint64_t first_correlation_id_of_thread() noexcept {
  static std::atomic<uint64_t> next_slot{1};
  const uint64_t slot = next_slot.fetch_add(1, std::memory_order_relaxed) & 0xFFFFFF;
  return (slot << 40) | 1;
}

bool init_thread_registry(const RingDrainer& drainer) noexcept {
  g_drainer = drainer;
  if (g_key_created) return true;
  if (pthread_key_create(&g_thread_exit_key, on_thread_exit) != 0) return false;
  g_key_created = true;
  return true;
}

ThreadBuffer* attach_current_thread() noexcept {
  // No guard check: hooks hold their own guard here, and a profiler thread
  // (a GPU timing backend) may record on purpose. The writer never emits.
  if (tls_cannot_record || !runtime::recording()) return nullptr;
  ReentrancyGuard guard;  // mmap, prctl and the definitions mutex below must not record

  const uint64_t capacity = runtime::config().buffer_bytes_per_thread;
  const uint64_t header_bytes = (sizeof(RegisteredBuffer) + kPageBytes - 1) & ~(kPageBytes - 1);
  const uint64_t mapping_bytes = header_bytes + capacity;
  void* mapping = mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    tls_cannot_record = true;
    warn_once(Warning::kOutOfMemory, "cannot map a thread buffer; threads without one are not recorded");
    return nullptr;
  }

  const uint32_t tid = static_cast<uint32_t>(gettid());
  auto* buffer = new (mapping) RegisteredBuffer();
  buffer->mapping_bytes = mapping_bytes;
  buffer->ring.init(static_cast<uint8_t*>(mapping) + header_bytes, capacity, tid, pthread_self());
  // The thread's first counted call comes after this (count_call attaches
  // first): its first ApiCount window starts here, not at the writer's first
  // flush, which can be long after a registration made before main.
  buffer->ring.set_counts_since_ns(now_ns());

  // The thread's name at its first record; renames arrive through the
  // pthread_setname_np hook.
  char name[16] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  define_thread(tid, name, now_ns());

  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    buffer->next.store(g_first.load(std::memory_order_relaxed), std::memory_order_relaxed);
    g_first.store(buffer, std::memory_order_release);
  }
  if (g_key_created) pthread_setspecific(g_thread_exit_key, &buffer->ring);
  tls_thread_buffer = &buffer->ring;

  if (g_drainer.first_record == nullptr || !g_drainer.first_record()) {
    // Without a writer the ring would only fill up; keep it registered (the
    // final drain at exit still sees it) but stop recording on this thread.
    tls_thread_buffer = nullptr;
    tls_cannot_record = true;
    return nullptr;
  }
  return &buffer->ring;
}

RegisteredBuffer* registry_first() noexcept { return g_first.load(std::memory_order_acquire); }

void registry_release(RegisteredBuffer* buffer) noexcept {
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    RegisteredBuffer* previous = nullptr;
    for (RegisteredBuffer* it = g_first.load(std::memory_order_relaxed); it != nullptr;
         it = it->next.load(std::memory_order_relaxed)) {
      if (it != buffer) {
        previous = it;
        continue;
      }
      RegisteredBuffer* next = it->next.load(std::memory_order_relaxed);
      if (previous == nullptr)
        g_first.store(next, std::memory_order_release);
      else
        previous->next.store(next, std::memory_order_release);
      break;
    }
  }
  munmap(buffer, buffer->mapping_bytes);
}

uint32_t registry_tid_of(pthread_t thread) noexcept {
  std::lock_guard<std::mutex> lock(g_registry_mutex);  // the writer unmaps under it
  for (RegisteredBuffer* it = g_first.load(std::memory_order_relaxed); it != nullptr;
       it = it->next.load(std::memory_order_relaxed)) {
    if (!it->retired.load(std::memory_order_relaxed) && pthread_equal(it->ring.thread(), thread))
      return it->ring.tid();
  }
  return 0;
}

void registry_lock_before_fork() noexcept { g_registry_mutex.lock(); }

void registry_unlock_after_fork_in_parent() noexcept { g_registry_mutex.unlock(); }

void registry_reset_after_fork_in_child() noexcept {
  // Only the forking thread exists here. Every buffer holds parent records
  // (the parent's writer writes them), so none is kept.
  RegisteredBuffer* it = g_first.load(std::memory_order_relaxed);
  g_first.store(nullptr, std::memory_order_relaxed);
  while (it != nullptr) {
    RegisteredBuffer* next = it->next.load(std::memory_order_relaxed);
    munmap(it, it->mapping_bytes);
    it = next;
  }
  tls_thread_buffer = nullptr;
  tls_cannot_record = false;
  tls_next_correlation_id = 0;  // the child section starts its own id space
  if (g_key_created) pthread_setspecific(g_thread_exit_key, nullptr);
  g_registry_mutex.unlock();
}

}  // namespace proflaunch
