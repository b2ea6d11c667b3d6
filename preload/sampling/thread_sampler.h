// Each sampled thread's state: its CPU-time timer, the memory its signal
// handler uses (rule cache, stacks already sent, scratch) and its sample
// buffer - one anonymous mapping per thread, made when the thread is armed,
// linked into a list the writer walks, unmapped by the writer once the thread
// exited and its buffer was drained.
//
// Only the thread's own handler writes the handler fields and the buffer;
// only the writer reads the buffer and writes the writer fields. The list
// mutex is taken by threads starting and ending, by the step back and by
// fork, never in the handler; the writer only try-locks it (a fork that holds
// it waits for the writer's round: the writer must not wait for it).
#pragma once

#include <pthread.h>
#include <setjmp.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "preload/config.h"
#include "preload/sampling/sample_buffer.h"
#include "preload/stacks/stack_keys.h"

namespace proflaunch::sampling {

struct CachedRule {
  uintptr_t pc;
  int32_t cfa_offset;
  int16_t rbp_offset;
  uint8_t kind;   // stacks::FrameRuleKind
  uint8_t flags;  // kRuleCfaFromRbp, kRuleRbpSaved, kRuleShim
};
static_assert(sizeof(CachedRule) == 16);
enum : uint8_t { kRuleCfaFromRbp = 1, kRuleRbpSaved = 2, kRuleShim = 4 };

inline constexpr uint32_t kRuleSlots = 1024;
inline constexpr uint32_t kSeenSlots = 2048;  // cleared at 3/4
inline constexpr uint32_t kWalkBudget = kMaxStackDepth + 24;

struct ThreadSampler {
  // --- set when armed
  uint32_t tid;
  uint32_t unused;
  uintptr_t stack_low;   // the thread's stack: every word the walker reads
  uintptr_t stack_high;  // lies in [stack_low, stack_high)
  timer_t timer;
  std::atomic<bool> armed;
  std::atomic<bool> closed;  // the thread is exiting: the handler does nothing
  // --- the handler's
  uint32_t rules_generation;
  uint32_t native_seen_count;
  uint32_t python_seen_count;
  volatile int reading;  // inside the handler's reads (fault recovery)
  sigjmp_buf fault_jump;
  CachedRule rules[kRuleSlots];
  uint64_t native_seen[kSeenSlots];
  uint64_t python_seen[kSeenSlots];
  stacks::PythonFrameKey keys[kMaxStackDepth];
  std::atomic<uint64_t> lost_unsafe;
  std::atomic<uint64_t> lost_full;
  std::atomic<uint64_t> first_lost_ns;
  // --- the writer's
  uint64_t reported_unsafe;
  uint64_t reported_full;
  bool thread_named;
  bool drained_after_exit;
  std::atomic<bool> exited;
  ThreadSampler* next;
  SampleBuffer buffer;
};

extern __thread __attribute__((tls_model("initial-exec"))) ThreadSampler* tls_thread_sampler;

// The calling thread: maps its state and arms its timer (period_ns of its
// own CPU time, signal `signal_number`). Not from a signal handler.
void arm_current_thread(int signal_number, uint64_t period_ns) noexcept;

// Disarms every thread's timer (the step back). Cold.
void disarm_all_threads() noexcept;

// The writer: calls `visit(ThreadSampler&)` for every live state, after
// unmapping those that exited and were drained. False when the list was busy.
template <typename Visit>
bool for_each_thread_sampler(Visit&& visit) noexcept;

// Cold: the pthread key (thread exit) and the fork handlers.
bool init_thread_samplers(int signal_number, uint64_t period_ns) noexcept;

// The list, for for_each_thread_sampler.
bool lock_sampler_list_for_writer() noexcept;
ThreadSampler* sampler_list_first() noexcept;
void release_exited_samplers_locked() noexcept;
void unlock_sampler_list() noexcept;

template <typename Visit>
bool for_each_thread_sampler(Visit&& visit) noexcept {
  if (!lock_sampler_list_for_writer()) return false;
  release_exited_samplers_locked();
  // The writer's own list (it may allocate): the states stay mapped while
  // it reads them, only this thread unmaps.
  static std::vector<ThreadSampler*>* states = new std::vector<ThreadSampler*>();
  states->clear();
  try {
    for (ThreadSampler* s = sampler_list_first(); s != nullptr; s = s->next) states->push_back(s);
  } catch (...) {
  }
  unlock_sampler_list();
  for (ThreadSampler* s : *states) visit(*s);
  return true;
}

}  // namespace proflaunch::sampling
