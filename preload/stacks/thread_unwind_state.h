// Each thread's memory for native stack walks: its frame rules
// (frame_rules.h) and the stacks it walked (walked_stack_cache.h). One
// mapping per thread (~560 KiB of address space, MAP_NORESERVE: only the
// pages used are memory), made on the thread's first capture, unmapped
// when the thread exits (pthread key destructor); a fork child unmaps those
// of the threads it did not inherit. Per thread, so no lock on any path.
//
// Code generation: both caches describe loaded code. When an object is
// unloaded, another may be loaded at its addresses with other unwind rules,
// so notice_code_unloaded() bumps a process-wide counter and every thread
// empties its caches before its next capture. The shim's dlclose calls it
// right after an object went away (dlclose_interposer.cpp); the writer
// thread's check of the loader's counters catches unloads made another way
// (glibc's own dlclose of NSS or iconv modules) within one cycle.
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/stacks/frame_rules.h"
#include "preload/stacks/walked_stack_cache.h"

namespace proflaunch::stacks {

// Per thread, for tests and the benchmarks.
struct NativeUnwindStats {
  uint64_t reused = 0;          // a stored walk, checked, was the stack
  uint64_t walked = 0;          // the stack was walked (in part: see below)
  uint64_t reused_prefix = 0;   //   ... from the frames it shared with a stored walk
  uint64_t reused_suffix = 0;   //   ... and it rejoined a stored walk further up
  uint64_t libunwind = 0;       // a frame outside the walker's rules: libunwind did it
  uint64_t cache_resets = 0;    // caches emptied (full, or code unloaded)
};

struct ThreadUnwindState {
  uint32_t code_generation;
  uint32_t unused;
  ThreadUnwindState* next;  // the registry of live states (fork)
  NativeUnwindStats stats;
  FrameRuleCache rules;
  WalkedStackCache stacks;
};

extern std::atomic<uint32_t> g_code_generation;
extern __thread __attribute__((tls_model("initial-exec"))) ThreadUnwindState* tls_unwind_state;

ThreadUnwindState* create_thread_unwind_state() noexcept;
void reset_thread_unwind_state(ThreadUnwindState* state, uint32_t generation) noexcept;

// The calling thread's state, current with the loaded code; nullptr when it
// cannot have one (no memory, or the thread is exiting). Hot path: one TLS
// load and one relaxed atomic load.
inline ThreadUnwindState* thread_unwind_state() noexcept {
  ThreadUnwindState* state = tls_unwind_state;
  if (__builtin_expect(state == nullptr, 0)) {
    state = create_thread_unwind_state();
    if (state == nullptr) return nullptr;
  }
  const uint32_t generation = g_code_generation.load(std::memory_order_acquire);
  if (__builtin_expect(state->code_generation != generation, 0)) reset_thread_unwind_state(state, generation);
  return state;
}

// Cold: the pthread key and the fork handlers. False without a key (then
// no thread gets a state: every stack goes to libunwind).
bool init_thread_unwind_states() noexcept;

// Some object was unloaded: every thread's caches are stale.
void notice_code_unloaded() noexcept;

// Compares dl_iterate_phdr's unload counter with the last one seen and calls
// notice_code_unloaded() when it moved. Cold (one dl_iterate_phdr step).
void check_for_unloaded_code() noexcept;

// Live states in the process (tests: thread exit and fork free theirs).
uint32_t live_thread_unwind_states() noexcept;

}  // namespace proflaunch::stacks
