// The libc calls where threads wait, one row each: what the OS runtime hooks
// (osrt_hooks.cpp) record when a call blocks at least --osrt-threshold.
//
//   X(api id, call, real symbol, what it waits on, how it fails, EINTR after a handler)
//
// - api id: ApiSpan::api of its BlockingCall (ApiDef domain kOsRuntime).
//   Ids 3500 and up; append, never renumber.
// - what it waits on: format::WaitObjectKind, or kDescriptor: a file
//   descriptor classified (fstat, /proc/self/fd) only when a call is recorded.
// - how it fails: kReturnsError (pthread_*: the error is the result) or
//   kSetsErrno (-1 and errno).
// - EINTR after a handler, even with SA_RESTART (signal(7), and the kernel's
//   futex code for timed futex waits): kRestarted, kNeverRestarted, or
//   kNeverRestartedWhenTimed. The hooks keep the CPU sampler's signal
//   blocked around the real call for the last two when the call may wait
//   (signal_hold.h), so no call fails with EINTR because of a sample.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/records.h"

#define PROFLAUNCH_OSRT_CALLS(X)                                                                           \
  X(3500, pthread_mutex_lock, pthread_mutex_lock, kMutex, kReturnsError, kRestarted)                       \
  X(3501, pthread_cond_wait, pthread_cond_wait, kCondition, kReturnsError, kRestarted)                     \
  X(3502, pthread_cond_timedwait, pthread_cond_timedwait, kCondition, kReturnsError, kRestarted)           \
  X(3503, pthread_cond_clockwait, pthread_cond_clockwait, kCondition, kReturnsError, kRestarted)           \
  X(3504, sem_wait, sem_wait, kSemaphore, kSetsErrno, kRestarted)                                          \
  X(3505, sem_timedwait, sem_timedwait, kSemaphore, kSetsErrno, kNeverRestarted)                           \
  X(3506, sem_clockwait, sem_clockwait, kSemaphore, kSetsErrno, kNeverRestarted)                           \
  X(3507, pthread_join, pthread_join, kThread, kReturnsError, kRestarted)                                  \
  X(3508, poll, poll, kDescriptor, kSetsErrno, kNeverRestarted)                                            \
  X(3509, ppoll, ppoll, kDescriptor, kSetsErrno, kNeverRestarted)                                          \
  X(3510, select, select, kDescriptor, kSetsErrno, kNeverRestarted)                                        \
  X(3511, pselect, pselect, kDescriptor, kSetsErrno, kNeverRestarted)                                      \
  X(3512, epoll_wait, epoll_wait, kEpoll, kSetsErrno, kNeverRestarted)                                     \
  X(3513, epoll_pwait, epoll_pwait, kEpoll, kSetsErrno, kNeverRestarted)                                   \
  X(3514, read, read, kDescriptor, kSetsErrno, kRestarted)                                                 \
  X(3515, recv, recv, kDescriptor, kSetsErrno, kRestarted)                                                 \
  X(3516, recvfrom, recvfrom, kDescriptor, kSetsErrno, kRestarted)                                         \
  X(3517, recvmsg, recvmsg, kDescriptor, kSetsErrno, kRestarted)                                           \
  X(3518, accept, accept, kDescriptor, kSetsErrno, kRestarted)                                             \
  X(3519, accept4, accept4, kDescriptor, kSetsErrno, kRestarted)                                           \
  X(3520, nanosleep, nanosleep, kNone, kSetsErrno, kNeverRestarted)                                        \
  X(3521, clock_nanosleep, clock_nanosleep, kNone, kReturnsError, kNeverRestarted)                         \
  X(3522, usleep, usleep, kNone, kSetsErrno, kNeverRestarted)                                              \
  X(3523, sleep, sleep, kNone, kSetsErrno, kNeverRestarted)                                                \
  X(3524, waitpid, waitpid, kChildProcess, kSetsErrno, kRestarted)                                         \
  X(3525, wait, wait, kChildProcess, kSetsErrno, kRestarted)                                               \
  X(3526, wait4, wait4, kChildProcess, kSetsErrno, kRestarted)                                             \
  X(3527, futex, syscall, kFutex, kSetsErrno, kNeverRestartedWhenTimed)                                   \
  /* What programs built with _FORTIFY_SOURCE call instead (glibc's checks, then the call). */             \
  X(3528, __read_chk, __read_chk, kDescriptor, kSetsErrno, kRestarted)                                     \
  X(3529, __recv_chk, __recv_chk, kDescriptor, kSetsErrno, kRestarted)                                     \
  X(3530, __recvfrom_chk, __recvfrom_chk, kDescriptor, kSetsErrno, kRestarted)                             \
  X(3531, __poll_chk, __poll_chk, kDescriptor, kSetsErrno, kNeverRestarted)                                \
  X(3532, __ppoll_chk, __ppoll_chk, kDescriptor, kSetsErrno, kNeverRestarted)

namespace proflaunch::osrt {

enum class Call : uint8_t {
#define PROFLAUNCH_OSRT_CALL_ENUM(id, call, symbol, object, errors, restart) call,
  PROFLAUNCH_OSRT_CALLS(PROFLAUNCH_OSRT_CALL_ENUM)
#undef PROFLAUNCH_OSRT_CALL_ENUM
};

enum class Errors : uint8_t { kReturnsError, kSetsErrno };
enum class Restart : uint8_t { kRestarted, kNeverRestarted, kNeverRestartedWhenTimed };

// Not a WaitObjectKind: the descriptor's kind is looked up when recording.
inline constexpr auto kDescriptor = static_cast<format::WaitObjectKind>(255);

struct CallRow {
  uint16_t api;
  const char* name;    // the ApiDef name
  const char* symbol;  // the libc function the hook calls
  format::WaitObjectKind object;
  Errors errors;
  Restart restart;
};

inline constexpr CallRow kCallRows[] = {
#define PROFLAUNCH_OSRT_CALL_ROW(id, call, symbol, object, errors, restart)                              \
  {id, #call, #symbol, [] {                                                                            \
     using enum format::WaitObjectKind;                                                                \
     return object;                                                                                    \
   }(),                                                                                                \
   Errors::errors, Restart::restart},
    PROFLAUNCH_OSRT_CALLS(PROFLAUNCH_OSRT_CALL_ROW)
#undef PROFLAUNCH_OSRT_CALL_ROW
};
inline constexpr size_t kCallCount = sizeof kCallRows / sizeof kCallRows[0];

constexpr const CallRow& row(Call call) { return kCallRows[static_cast<size_t>(call)]; }

}  // namespace proflaunch::osrt
