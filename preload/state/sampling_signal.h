// The signal CPU samples arrive on: set by the sampler (sampling/) when it
// arms its timers, read by the OS runtime hooks (osrt/), which keep it blocked
// around the calls the kernel never restarts after a handler (nanosleep,
// poll, epoll_wait, ...: signal(7)), so that no call of the program fails
// with EINTR because of a sample.
#pragma once

#include <atomic>

namespace proflaunch {

namespace detail {
inline std::atomic<int> g_sampling_signal{0};
inline std::atomic<int> g_claimed_sampling_signal{0};
}  // namespace detail

// 0 while no sampling timer can fire.
inline int sampling_signal() noexcept { return detail::g_sampling_signal.load(std::memory_order_relaxed); }
inline void set_sampling_signal(int signal) noexcept {
  detail::g_sampling_signal.store(signal, std::memory_order_relaxed);
}

// The signal whose handler the sampler installed (0: none, or it stepped
// back): the exported sigaction/signal/pthread_create hooks ask it. Inline
// and trivial because those hooks run before a sanitizer runtime in the
// program has initialized (TSan's start installs its handlers through them)
// and are compiled without instrumentation; a call into instrumented code
// there crashes.
__attribute__((always_inline)) inline int claimed_sampling_signal() noexcept {
  return detail::g_claimed_sampling_signal.load(std::memory_order_acquire);
}
inline void set_claimed_sampling_signal(int signal) noexcept {
  detail::g_claimed_sampling_signal.store(signal, std::memory_order_release);
}
inline int take_claimed_sampling_signal() noexcept {
  return detail::g_claimed_sampling_signal.exchange(0, std::memory_order_acq_rel);
}

}  // namespace proflaunch
