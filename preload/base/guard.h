// The reentrancy guard: one nestable counter per thread. A hook records only
// when it is the outermost profiler frame on its thread, so a hooked call made
// by the real function (the runtime calling the driver), by the profiler itself
// or by the profiler's own threads passes straight through.
//
// Initial-exec TLS: one %fs-relative access, no __tls_get_addr call, no
// allocation on a thread's first use (the dynamic TLS model can call malloc
// there, which would recurse into a malloc hook). `__thread` rather than
// `thread_local`: C++ thread_local across files goes through an init wrapper
// and leaves a weak dynamic symbol per variable.
#pragma once

#include <cstdint>

namespace proflaunch {

extern __thread __attribute__((tls_model("initial-exec"))) uint32_t tls_guard_depth;

// A depth no hook nesting reaches: marks a thread as the profiler's own.
inline constexpr uint32_t kProfilerThreadDepth = 1u << 30;

class ReentrancyGuard {
 public:
  ReentrancyGuard() noexcept : outermost_(tls_guard_depth++ == 0) {}
  ~ReentrancyGuard() { --tls_guard_depth; }
  ReentrancyGuard(const ReentrancyGuard&) = delete;
  ReentrancyGuard& operator=(const ReentrancyGuard&) = delete;

  // True when no profiler code is active below this frame on this thread and
  // the thread is not one of the profiler's own: the hook may record.
  bool outermost() const noexcept { return outermost_; }

 private:
  bool outermost_;
};

inline bool inside_profiler() noexcept { return tls_guard_depth != 0; }

// Called first thing by every thread the profiler starts.
inline void mark_profiler_thread() noexcept { tls_guard_depth = kProfilerThreadDepth; }

}  // namespace proflaunch
