#include "preload/sampling/thread_sampler.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>

#include "preload/writer/writer.h"

namespace proflaunch::sampling {

__thread __attribute__((tls_model("initial-exec"))) ThreadSampler* tls_thread_sampler = nullptr;

namespace {

constexpr size_t kStateBytes = (sizeof(ThreadSampler) + 4095) & ~size_t{4095};

std::mutex g_list_mutex;
ThreadSampler* g_first = nullptr;
pthread_key_t g_key;
bool g_key_ready = false;
int g_signal = 0;
uint64_t g_period_ns = 0;
std::atomic<bool> g_disarmed{false};

void block_sampling_signal(sigset_t* old) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, g_signal);
  pthread_sigmask(SIG_BLOCK, &set, old);
}

bool create_timer(ThreadSampler* state) {
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = g_signal;
  event.sigev_value.sival_ptr = state;
  event._sigev_un._tid = static_cast<pid_t>(state->tid);
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &state->timer) != 0) return false;
  itimerspec period{};
  period.it_interval.tv_sec = static_cast<time_t>(g_period_ns / 1000000000u);
  period.it_interval.tv_nsec = static_cast<long>(g_period_ns % 1000000000u);
  period.it_value = period.it_interval;
  if (timer_settime(state->timer, 0, &period, nullptr) != 0) {
    timer_delete(state->timer);
    return false;
  }
  state->armed.store(true, std::memory_order_release);
  return true;
}

void find_stack(ThreadSampler* state) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* low = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &low, &size) == 0) {
    state->stack_low = reinterpret_cast<uintptr_t>(low);
    state->stack_high = state->stack_low + size;
  }
  pthread_attr_destroy(&attr);
}

// Thread exit (pthread key destructor): no more samples, then the writer's.
void on_thread_exit(void* value) {
  auto* state = static_cast<ThreadSampler*>(value);
  if (state == nullptr) return;
  sigset_t old;
  block_sampling_signal(&old);  // not restored: the thread is ending
  state->closed.store(true, std::memory_order_release);
  if (state->armed.exchange(false, std::memory_order_acq_rel)) timer_delete(state->timer);
  tls_thread_sampler = nullptr;
  state->exited.store(true, std::memory_order_release);
}

void lock_before_fork() { g_list_mutex.lock(); }
void unlock_in_parent() { g_list_mutex.unlock(); }

// The child has one thread: the one that forked. Its buffer held the
// parent's samples (the parent's writer writes them) and its stacks already
// sent were sent to the parent's section: it starts over, with a new timer
// (timers are not inherited).
void reset_in_child() {
  ThreadSampler* mine = tls_thread_sampler;
  ThreadSampler* it = g_first;
  g_first = nullptr;
  while (it != nullptr) {
    ThreadSampler* next = it->next;
    if (it != mine) munmap(it, kStateBytes);
    it = next;
  }
  if (mine != nullptr) {
    mine->next = nullptr;
    g_first = mine;
    mine->armed.store(false, std::memory_order_relaxed);
    mine->buffer.reset();
    mine->native_seen_count = 0;
    mine->python_seen_count = 0;
    for (uint64_t& h : mine->native_seen) h = 0;
    for (uint64_t& h : mine->python_seen) h = 0;
    mine->lost_unsafe.store(0, std::memory_order_relaxed);
    mine->lost_full.store(0, std::memory_order_relaxed);
    mine->first_lost_ns.store(0, std::memory_order_relaxed);
    mine->reported_unsafe = mine->reported_full = 0;
    mine->thread_named = false;
    mine->tid = static_cast<uint32_t>(syscall(SYS_gettid));
    if (!g_disarmed.load(std::memory_order_acquire)) create_timer(mine);
  }
  g_list_mutex.unlock();
  // The child's writer starts on its first record; a child that only burns
  // CPU makes none, and its samples need one. (The life cycle's fork
  // handlers, registered before these, have reset the writer by now.)
  if (mine != nullptr && !g_disarmed.load(std::memory_order_acquire)) writer_ensure_started();
}

}  // namespace

bool init_thread_samplers(int signal_number, uint64_t period_ns) noexcept {
  if (g_key_ready) return true;
  g_signal = signal_number;
  g_period_ns = period_ns;
  if (pthread_key_create(&g_key, on_thread_exit) != 0) return false;
  pthread_atfork(lock_before_fork, unlock_in_parent, reset_in_child);
  g_key_ready = true;
  return true;
}

void arm_current_thread(int, uint64_t) noexcept {
  if (!g_key_ready || tls_thread_sampler != nullptr || g_disarmed.load(std::memory_order_acquire)) return;
  // A thread born with the signal blocked (the shim's writer blocks them
  // all; so do signal-waiting threads of programs) would never take a
  // sample: no timer, no mapping.
  sigset_t mask;
  if (pthread_sigmask(SIG_BLOCK, nullptr, &mask) == 0 && sigismember(&mask, g_signal) == 1) return;
  void* memory = mmap(nullptr, kStateBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) return;
  auto* state = static_cast<ThreadSampler*>(memory);  // zero pages: every table empty
  state->tid = static_cast<uint32_t>(syscall(SYS_gettid));
  find_stack(state);
  {
    std::lock_guard<std::mutex> lock(g_list_mutex);
    state->next = g_first;
    g_first = state;
  }
  pthread_setspecific(g_key, state);
  tls_thread_sampler = state;
  std::lock_guard<std::mutex> lock(g_list_mutex);  // against a step back in between
  if (!g_disarmed.load(std::memory_order_acquire)) create_timer(state);
}

void disarm_all_threads() noexcept {
  std::lock_guard<std::mutex> lock(g_list_mutex);
  g_disarmed.store(true, std::memory_order_release);
  for (ThreadSampler* s = g_first; s != nullptr; s = s->next) {
    if (!s->armed.exchange(false, std::memory_order_acq_rel)) continue;
    itimerspec off{};
    timer_settime(s->timer, 0, &off, nullptr);
    timer_delete(s->timer);
  }
}

bool lock_sampler_list_for_writer() noexcept { return g_list_mutex.try_lock(); }
ThreadSampler* sampler_list_first() noexcept { return g_first; }
void unlock_sampler_list() noexcept { g_list_mutex.unlock(); }

void release_exited_samplers_locked() noexcept {
  for (ThreadSampler** link = &g_first; *link != nullptr;) {
    ThreadSampler* s = *link;
    if (s->drained_after_exit) {
      *link = s->next;
      munmap(s, kStateBytes);
    } else {
      link = &s->next;
    }
  }
}

}  // namespace proflaunch::sampling
