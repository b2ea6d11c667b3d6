// How an OS runtime hook times its call and records it when it blocked:
//
//   int pthread_mutex_lock(pthread_mutex_t* mutex) {
//     BlockingCall timing(Call::pthread_mutex_lock);     // one load and a branch when not watching
//     const int result = real<decltype(::pthread_mutex_lock)>(Call::pthread_mutex_lock)(mutex);
//     timing.done(result, address(mutex), __builtin_return_address(0));
//     return result;
//   }
//
// The fast path is two tick reads and a compare (clock.h now_ticks: the TSC
// where the kernel keeps time with it). Only a call that took at least the
// threshold goes on to the cold path (record_blocking_call), which checks
// the guard and the caller, classifies a descriptor, writes the
// BlockingCall and its CallStack. Nothing is held across the real call: the
// thread is exactly as untraced while it waits (a CPU sample taken then sees
// the program, not the shim).
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/base/clock.h"
#include "preload/base/guard.h"
#include "preload/osrt/osrt_calls.h"
#include "preload/state/runtime_state.h"

namespace proflaunch::osrt {

// The threshold in ticks, lowered by a margin so that the cold path, which
// compares in ns, sees every call that may reach it; UINT64_MAX while
// nothing is timed (before start, --osrt-threshold=off).
extern std::atomic<uint64_t> g_threshold_ticks;

// Whether this call is timed: OS runtime recording on, inside a capture
// window, and not a call the shim itself makes on a profiler thread or from
// inside a hook.
inline bool watching() noexcept {
  return __builtin_expect(g_threshold_ticks.load(std::memory_order_relaxed) != UINT64_MAX, 1) &&
         runtime::recording() && !inside_profiler();
}

struct Outcome {
  long result;
  int error;  // errno (or the returned error) when the call failed, else 0
  uint64_t object;
  format::WaitObjectKind kind;  // kDescriptor: `object` is a descriptor to classify
};

// The cold path (blocking_call.cpp). Keeps errno.
void record_blocking_call(Call call, uint64_t begin_ticks, uint64_t end_ticks, const Outcome& outcome,
                          const void* caller) noexcept;

class BlockingCall {
 public:
  explicit BlockingCall(Call call) noexcept : call_(call), begin_(watching() ? now_ticks() : 0) {}

  // After the real call, before anything else can change errno.
  inline void done(long result, uint64_t object, const void* caller) noexcept {
    if (begin_ == 0) return;
    const uint64_t end = now_ticks();
    if (__builtin_expect(end - begin_ < g_threshold_ticks.load(std::memory_order_relaxed), 1)) return;
    finish(end, result, object, caller);
  }
  // The same, with the object's kind decided by the hook (poll on a
  // descriptor set, futex operations).
  inline void done(long result, uint64_t object, format::WaitObjectKind kind, const void* caller) noexcept {
    if (begin_ == 0) return;
    const uint64_t end = now_ticks();
    if (__builtin_expect(end - begin_ < g_threshold_ticks.load(std::memory_order_relaxed), 1)) return;
    finish(end, result, object, kind, caller);
  }
  bool timed() const noexcept { return begin_ != 0; }

 private:
  void finish(uint64_t end, long result, uint64_t object, const void* caller) noexcept {
    finish(end, result, object, row(call_).object, caller);
  }
  void finish(uint64_t end, long result, uint64_t object, format::WaitObjectKind kind, const void* caller) noexcept;

  Call call_;
  uint64_t begin_;
};

// The function a hook calls: resolved at start (dlsym RTLD_NEXT); a call
// made before (another library's constructor) finds libc's own definition
// by reading libc's symbol table, which takes no lock and allocates nothing.
void* resolve_early(Call call) noexcept;
extern std::atomic<void*> g_real[kCallCount];

template <typename Function>
inline Function* real(Call call) noexcept {
  void* function = g_real[static_cast<size_t>(call)].load(std::memory_order_relaxed);
  if (__builtin_expect(function == nullptr, 0)) function = resolve_early(call);
  return reinterpret_cast<Function*>(function);
}

inline uint64_t address(const void* object) noexcept { return reinterpret_cast<uintptr_t>(object); }

}  // namespace proflaunch::osrt
