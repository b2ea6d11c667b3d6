#include "preload/stacks/thread_unwind_state.h"

#include <link.h>
#include <pthread.h>
#include <sys/mman.h>

#include <mutex>
#include <new>

namespace proflaunch::stacks {

std::atomic<uint32_t> g_code_generation{0};
__thread __attribute__((tls_model("initial-exec"))) ThreadUnwindState* tls_unwind_state = nullptr;

namespace {

// Set by the key destructor: a capture made later in the thread's exit (by
// another key's destructor) must not map a state nobody would unmap.
__thread __attribute__((tls_model("initial-exec"))) bool tls_unwind_state_gone = false;

constexpr size_t kStateBytes = (sizeof(ThreadUnwindState) + 4095) & ~size_t{4095};

pthread_key_t g_state_key;
std::atomic<bool> g_key_ready{false};

// Live states, for the fork child to unmap those of threads it lacks. Taken
// on thread start and exit only, never on a capture.
std::mutex g_registry_mutex;
ThreadUnwindState* g_first = nullptr;
uint32_t g_live = 0;

void unlink_locked(ThreadUnwindState* state) {
  for (ThreadUnwindState** link = &g_first; *link != nullptr; link = &(*link)->next) {
    if (*link == state) {
      *link = state->next;
      --g_live;
      return;
    }
  }
}

void destroy_state(void* value) {
  auto* state = static_cast<ThreadUnwindState*>(value);
  if (state == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    unlink_locked(state);
  }
  if (tls_unwind_state == state) tls_unwind_state = nullptr;
  tls_unwind_state_gone = true;
  munmap(state, kStateBytes);
}

void lock_before_fork() { g_registry_mutex.lock(); }
void unlock_in_parent() { g_registry_mutex.unlock(); }
void keep_only_this_thread_in_child() {
  ThreadUnwindState* mine = tls_unwind_state;
  ThreadUnwindState* it = g_first;
  g_first = nullptr;
  g_live = 0;
  while (it != nullptr) {
    ThreadUnwindState* next = it->next;
    if (it == mine) {
      it->next = nullptr;
      g_first = it;
      g_live = 1;
    } else {
      munmap(it, kStateBytes);
    }
    it = next;
  }
  g_registry_mutex.unlock();
}

std::atomic<unsigned long long> g_unloads_seen{0};

int read_unload_counter(dl_phdr_info* info, size_t size, void* data) {
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *static_cast<unsigned long long*>(data) = info->dlpi_subs;
  return 1;  // a global counter: the first object is enough
}

unsigned long long unload_counter() {
  unsigned long long subs = 0;
  dl_iterate_phdr(read_unload_counter, &subs);
  return subs;
}

}  // namespace

bool init_thread_unwind_states() noexcept {
  if (g_key_ready.load(std::memory_order_acquire)) return true;
  if (pthread_key_create(&g_state_key, destroy_state) != 0) return false;
  pthread_atfork(lock_before_fork, unlock_in_parent, keep_only_this_thread_in_child);
  g_unloads_seen.store(unload_counter(), std::memory_order_relaxed);
  g_key_ready.store(true, std::memory_order_release);
  return true;
}

ThreadUnwindState* create_thread_unwind_state() noexcept {
  if (tls_unwind_state_gone || !g_key_ready.load(std::memory_order_acquire)) return nullptr;
  void* memory = mmap(nullptr, kStateBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
  if (memory == MAP_FAILED) {
    tls_unwind_state_gone = true;  // do not retry on every capture
    return nullptr;
  }
  // Anonymous pages are zero: every cache starts empty.
  auto* state = static_cast<ThreadUnwindState*>(memory);
  state->code_generation = g_code_generation.load(std::memory_order_acquire);
  {
    std::lock_guard<std::mutex> lock(g_registry_mutex);
    state->next = g_first;
    g_first = state;
    ++g_live;
  }
  // May allocate once per thread in glibc (a key's second-level array).
  pthread_setspecific(g_state_key, state);
  tls_unwind_state = state;
  return state;
}

void reset_thread_unwind_state(ThreadUnwindState* state, uint32_t generation) noexcept {
  state->rules.clear();
  state->stacks.clear();
  ++state->stats.cache_resets;
  state->code_generation = generation;
}

void notice_code_unloaded() noexcept { g_code_generation.fetch_add(1, std::memory_order_acq_rel); }

void check_for_unloaded_code() noexcept {
  const unsigned long long subs = unload_counter();
  if (g_unloads_seen.exchange(subs, std::memory_order_acq_rel) != subs) notice_code_unloaded();
}

uint32_t live_thread_unwind_states() noexcept {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  return g_live;
}

}  // namespace proflaunch::stacks
