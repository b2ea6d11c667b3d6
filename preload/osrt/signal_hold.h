// Keeps the CPU sampler's signal (state/sampling_signal.h) blocked around a
// call the kernel never restarts after a signal handler, even with
// SA_RESTART (signal(7): nanosleep, clock_nanosleep, usleep, poll, ppoll,
// select, pselect, epoll_wait, epoll_pwait; and timed futex waits, under
// sem_timedwait/sem_clockwait and syscall(SYS_futex) with a timeout), so that
// a sample never makes the program's call fail with EINTR or a sleep end
// early. The pending sample is taken when the mask is put back.
//
// Only when a sampling signal is armed and the call may wait (a timeout
// other than zero): then it costs two rt_sigprocmask system calls (see
// README.md for the figure); otherwise one relaxed load.
//
// The calls that take a mask of their own for the wait (ppoll, pselect,
// epoll_pwait) get a copy with the signal added (with_sampling_signal).
#pragma once

#include <signal.h>

#include "preload/state/sampling_signal.h"

namespace proflaunch::osrt {

class SamplingSignalHold {
 public:
  explicit SamplingSignalHold(bool may_wait) noexcept {
    if (!may_wait) return;
    const int signal = sampling_signal();
    if (__builtin_expect(signal == 0, 1)) return;
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, signal);
    held_ = pthread_sigmask(SIG_BLOCK, &blocked, &previous_) == 0;
  }
  ~SamplingSignalHold() {
    // The exact mask the program had; pthread_sigmask leaves errno alone.
    if (held_) pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SamplingSignalHold(const SamplingSignalHold&) = delete;
  SamplingSignalHold& operator=(const SamplingSignalHold&) = delete;

 private:
  bool held_ = false;
  sigset_t previous_;
};

// `mask` with the sampling signal added, in `copy`; `mask` itself when no
// signal is armed (or the program passed none: then a SamplingSignalHold
// covers the call).
inline const sigset_t* with_sampling_signal(const sigset_t* mask, sigset_t& copy) noexcept {
  const int signal = sampling_signal();
  if (mask == nullptr || signal == 0) return mask;
  copy = *mask;
  sigaddset(&copy, signal);
  return &copy;
}

}  // namespace proflaunch::osrt
