// The exported OS runtime hooks, one per row of osrt_calls.h: each calls the
// real function between two tick reads (blocking_call.h) and, for the calls
// the kernel never restarts after a signal handler, keeps the CPU sampler's
// signal blocked while the call may wait (signal_hold.h).
//
// The shim's own code calls these too (its mutexes, the writer's futex
// waits): the guard (profiler threads, calls made inside a hook) and the
// caller's address (shim code on a program thread) keep those out of the
// trace on the cold path; the fast path does not look.
#undef _FORTIFY_SOURCE  // read, recv, recvfrom must be plain declarations here

#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/futex.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "preload/intercept/hook_registry.h"
#include "preload/osrt/blocking_call.h"
#include "preload/osrt/signal_hold.h"

// The function the hook wraps, typed from libc's own declaration.
#define REAL(name) ::proflaunch::osrt::real<decltype(::name)>(::proflaunch::osrt::Call::name)
#define CALLER __builtin_return_address(0)

namespace proflaunch::osrt {
namespace {

using format::WaitObjectKind;

bool nonzero(const timespec* timeout) { return timeout == nullptr || timeout->tv_sec != 0 || timeout->tv_nsec != 0; }
bool nonzero(const timeval* timeout) { return timeout == nullptr || timeout->tv_sec != 0 || timeout->tv_usec != 0; }

// The lowest descriptor in a select set (before the call changes them).
int first_descriptor(int count, const fd_set* read, const fd_set* write, const fd_set* except) {
  for (int fd = 0; fd < count && fd < FD_SETSIZE; ++fd)
    if ((read && FD_ISSET(fd, read)) || (write && FD_ISSET(fd, write)) || (except && FD_ISSET(fd, except)))
      return fd;
  return -1;
}

struct PollObject {
  uint64_t object;
  WaitObjectKind kind;
};
PollObject poll_object(const pollfd* fds, nfds_t count) {
  if (count == 0 || fds == nullptr) return {0, WaitObjectKind::kNone};  // poll as a sleep
  return {static_cast<uint64_t>(fds[0].fd), kDescriptor};
}
PollObject select_object(int fd) {
  if (fd < 0) return {0, WaitObjectKind::kNone};
  return {static_cast<uint64_t>(fd), kDescriptor};
}

uint64_t child_object(pid_t pid) { return pid > 0 ? static_cast<uint64_t>(pid) : 0; }

// Futex operations that wait, and those whose timed wait the kernel ends with
// EINTR after a handler (futex_wait's restart block): FUTEX_LOCK_PI* restart.
bool futex_waits(long op) {
  switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_LOCK_PI:
    case FUTEX_LOCK_PI2:
      return true;
    default:
      return false;
  }
}
bool futex_timed_wait_not_restarted(long op, long timeout) {
  const long command = op & FUTEX_CMD_MASK;
  return timeout != 0 &&
         (command == FUTEX_WAIT || command == FUTEX_WAIT_BITSET || command == FUTEX_WAIT_REQUEUE_PI);
}

// A timed semaphore wait that would not wait needs no mask: try first, and
// keep errno as the program would see it.
bool semaphore_taken_at_once(sem_t* semaphore) {
  if (sampling_signal() == 0) return false;
  const int saved_errno = errno;
  if (sem_trywait(semaphore) == 0) return true;
  errno = saved_errno;
  return false;
}

}  // namespace
}  // namespace proflaunch::osrt

using proflaunch::osrt::address;
using proflaunch::osrt::BlockingCall;
using proflaunch::osrt::Call;
using proflaunch::osrt::SamplingSignalHold;

extern "C" {

// ---- locks, condition variables, semaphores, threads

PROFLAUNCH_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex) noexcept {
  BlockingCall timing(Call::pthread_mutex_lock);
  const int result = REAL(pthread_mutex_lock)(mutex);
  timing.done(result, address(mutex), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int pthread_cond_wait(pthread_cond_t* condition, pthread_mutex_t* mutex) {
  BlockingCall timing(Call::pthread_cond_wait);
  const int result = REAL(pthread_cond_wait)(condition, mutex);
  timing.done(result, address(condition), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int pthread_cond_timedwait(pthread_cond_t* condition, pthread_mutex_t* mutex,
                                             const timespec* deadline) {
  BlockingCall timing(Call::pthread_cond_timedwait);
  const int result = REAL(pthread_cond_timedwait)(condition, mutex, deadline);
  timing.done(result, address(condition), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int pthread_cond_clockwait(pthread_cond_t* condition, pthread_mutex_t* mutex, clockid_t clock,
                                             const timespec* deadline) {
  BlockingCall timing(Call::pthread_cond_clockwait);
  const int result = REAL(pthread_cond_clockwait)(condition, mutex, clock, deadline);
  timing.done(result, address(condition), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int sem_wait(sem_t* semaphore) {
  BlockingCall timing(Call::sem_wait);
  const int result = REAL(sem_wait)(semaphore);
  timing.done(result, address(semaphore), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int sem_timedwait(sem_t* semaphore, const timespec* deadline) {
  if (proflaunch::osrt::semaphore_taken_at_once(semaphore)) return 0;
  SamplingSignalHold hold(true);
  BlockingCall timing(Call::sem_timedwait);
  const int result = REAL(sem_timedwait)(semaphore, deadline);
  timing.done(result, address(semaphore), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int sem_clockwait(sem_t* semaphore, clockid_t clock, const timespec* deadline) {
  if (proflaunch::osrt::semaphore_taken_at_once(semaphore)) return 0;
  SamplingSignalHold hold(true);
  BlockingCall timing(Call::sem_clockwait);
  const int result = REAL(sem_clockwait)(semaphore, clock, deadline);
  timing.done(result, address(semaphore), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int pthread_join(pthread_t thread, void** value) {
  BlockingCall timing(Call::pthread_join);
  const int result = REAL(pthread_join)(thread, value);
  timing.done(result, static_cast<uint64_t>(thread), CALLER);
  return result;
}

// ---- waiting for descriptors

PROFLAUNCH_EXPORT int poll(pollfd* fds, nfds_t count, int timeout_ms) {
  SamplingSignalHold hold(timeout_ms != 0);
  BlockingCall timing(Call::poll);
  const int result = REAL(poll)(fds, count, timeout_ms);
  const auto object = proflaunch::osrt::poll_object(fds, count);
  timing.done(result, object.object, object.kind, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int ppoll(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask) {
  const bool may_wait = proflaunch::osrt::nonzero(timeout);
  sigset_t copy;
  const sigset_t* effective = may_wait ? proflaunch::osrt::with_sampling_signal(mask, copy) : mask;
  SamplingSignalHold hold(may_wait && mask == nullptr);
  BlockingCall timing(Call::ppoll);
  const int result = REAL(ppoll)(fds, count, timeout, effective);
  const auto object = proflaunch::osrt::poll_object(fds, count);
  timing.done(result, object.object, object.kind, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int select(int count, fd_set* read, fd_set* write, fd_set* except, timeval* timeout) {
  SamplingSignalHold hold(proflaunch::osrt::nonzero(timeout));
  BlockingCall timing(Call::select);
  const int first = timing.timed() ? proflaunch::osrt::first_descriptor(count, read, write, except) : -1;
  const int result = REAL(select)(count, read, write, except, timeout);
  const auto object = proflaunch::osrt::select_object(first);
  timing.done(result, object.object, object.kind, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int pselect(int count, fd_set* read, fd_set* write, fd_set* except, const timespec* timeout,
                              const sigset_t* mask) {
  const bool may_wait = proflaunch::osrt::nonzero(timeout);
  sigset_t copy;
  const sigset_t* effective = may_wait ? proflaunch::osrt::with_sampling_signal(mask, copy) : mask;
  SamplingSignalHold hold(may_wait && mask == nullptr);
  BlockingCall timing(Call::pselect);
  const int first = timing.timed() ? proflaunch::osrt::first_descriptor(count, read, write, except) : -1;
  const int result = REAL(pselect)(count, read, write, except, timeout, effective);
  const auto object = proflaunch::osrt::select_object(first);
  timing.done(result, object.object, object.kind, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int epoll_wait(int epoll, epoll_event* events, int count, int timeout_ms) {
  SamplingSignalHold hold(timeout_ms != 0);
  BlockingCall timing(Call::epoll_wait);
  const int result = REAL(epoll_wait)(epoll, events, count, timeout_ms);
  timing.done(result, static_cast<uint64_t>(epoll), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int epoll_pwait(int epoll, epoll_event* events, int count, int timeout_ms, const sigset_t* mask) {
  sigset_t copy;
  const sigset_t* effective = timeout_ms != 0 ? proflaunch::osrt::with_sampling_signal(mask, copy) : mask;
  SamplingSignalHold hold(timeout_ms != 0 && mask == nullptr);
  BlockingCall timing(Call::epoll_pwait);
  const int result = REAL(epoll_pwait)(epoll, events, count, timeout_ms, effective);
  timing.done(result, static_cast<uint64_t>(epoll), CALLER);
  return result;
}

// ---- reading from pipes and sockets (a regular file is never recorded)

PROFLAUNCH_EXPORT ssize_t read(int fd, void* buffer, size_t bytes) {
  BlockingCall timing(Call::read);
  const ssize_t result = REAL(read)(fd, buffer, bytes);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT ssize_t recv(int fd, void* buffer, size_t bytes, int flags) {
  BlockingCall timing(Call::recv);
  const ssize_t result = REAL(recv)(fd, buffer, bytes, flags);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT ssize_t recvfrom(int fd, void* __restrict buffer, size_t bytes, int flags,
                                   sockaddr* __restrict from, socklen_t* __restrict from_bytes) {
  BlockingCall timing(Call::recvfrom);
  const ssize_t result = REAL(recvfrom)(fd, buffer, bytes, flags, from, from_bytes);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT ssize_t recvmsg(int fd, msghdr* message, int flags) {
  BlockingCall timing(Call::recvmsg);
  const ssize_t result = REAL(recvmsg)(fd, message, flags);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int accept(int fd, sockaddr* __restrict peer, socklen_t* __restrict peer_bytes) {
  BlockingCall timing(Call::accept);
  const int result = REAL(accept)(fd, peer, peer_bytes);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int accept4(int fd, sockaddr* __restrict peer, socklen_t* __restrict peer_bytes, int flags) {
  BlockingCall timing(Call::accept4);
  const int result = REAL(accept4)(fd, peer, peer_bytes, flags);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

// ---- sleeps

PROFLAUNCH_EXPORT int nanosleep(const timespec* duration, timespec* remaining) {
  SamplingSignalHold hold(duration == nullptr || proflaunch::osrt::nonzero(duration));
  BlockingCall timing(Call::nanosleep);
  const int result = REAL(nanosleep)(duration, remaining);
  timing.done(result, 0, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int clock_nanosleep(clockid_t clock, int flags, const timespec* duration, timespec* remaining) {
  // An absolute deadline of zero is in the past: it does not wait either.
  SamplingSignalHold hold(duration == nullptr || proflaunch::osrt::nonzero(duration));
  BlockingCall timing(Call::clock_nanosleep);
  const int result = REAL(clock_nanosleep)(clock, flags, duration, remaining);
  timing.done(result, 0, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int usleep(useconds_t microseconds) {
  SamplingSignalHold hold(microseconds != 0);
  BlockingCall timing(Call::usleep);
  const int result = REAL(usleep)(microseconds);
  timing.done(result, 0, CALLER);
  return result;
}

PROFLAUNCH_EXPORT unsigned int sleep(unsigned int seconds) {
  SamplingSignalHold hold(seconds != 0);
  BlockingCall timing(Call::sleep);
  const unsigned int result = REAL(sleep)(seconds);
  timing.done(static_cast<long>(result), 0, CALLER);
  return result;
}

// ---- child processes

PROFLAUNCH_EXPORT pid_t waitpid(pid_t pid, int* status, int options) {
  BlockingCall timing(Call::waitpid);
  const pid_t result = REAL(waitpid)(pid, status, options);
  timing.done(result, proflaunch::osrt::child_object(pid), CALLER);
  return result;
}

PROFLAUNCH_EXPORT pid_t wait(int* status) {
  BlockingCall timing(Call::wait);
  const pid_t result = REAL(wait)(status);
  timing.done(result, 0, CALLER);
  return result;
}

PROFLAUNCH_EXPORT pid_t wait4(pid_t pid, int* status, int options, rusage* usage) noexcept {
  BlockingCall timing(Call::wait4);
  const pid_t result = REAL(wait4)(pid, status, options, usage);
  timing.done(result, proflaunch::osrt::child_object(pid), CALLER);
  return result;
}

// ---- the _FORTIFY_SOURCE variants (declared by glibc only in fortified
// builds): the real ones check the buffer's size, then make the call.

ssize_t __read_chk(int fd, void* buffer, size_t bytes, size_t buffer_bytes);
ssize_t __recv_chk(int fd, void* buffer, size_t bytes, size_t buffer_bytes, int flags);
ssize_t __recvfrom_chk(int fd, void* __restrict buffer, size_t bytes, size_t buffer_bytes, int flags,
                       sockaddr* __restrict from, socklen_t* __restrict from_bytes);
int __poll_chk(pollfd* fds, nfds_t count, int timeout_ms, size_t fds_bytes);
int __ppoll_chk(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask, size_t fds_bytes);

PROFLAUNCH_EXPORT ssize_t __read_chk(int fd, void* buffer, size_t bytes, size_t buffer_bytes) {
  BlockingCall timing(Call::__read_chk);
  const ssize_t result = REAL(__read_chk)(fd, buffer, bytes, buffer_bytes);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT ssize_t __recv_chk(int fd, void* buffer, size_t bytes, size_t buffer_bytes, int flags) {
  BlockingCall timing(Call::__recv_chk);
  const ssize_t result = REAL(__recv_chk)(fd, buffer, bytes, buffer_bytes, flags);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT ssize_t __recvfrom_chk(int fd, void* __restrict buffer, size_t bytes, size_t buffer_bytes,
                                         int flags, sockaddr* __restrict from, socklen_t* __restrict from_bytes) {
  BlockingCall timing(Call::__recvfrom_chk);
  const ssize_t result = REAL(__recvfrom_chk)(fd, buffer, bytes, buffer_bytes, flags, from, from_bytes);
  timing.done(result, static_cast<uint64_t>(fd), CALLER);
  return result;
}

PROFLAUNCH_EXPORT int __poll_chk(pollfd* fds, nfds_t count, int timeout_ms, size_t fds_bytes) {
  SamplingSignalHold hold(timeout_ms != 0);
  BlockingCall timing(Call::__poll_chk);
  const int result = REAL(__poll_chk)(fds, count, timeout_ms, fds_bytes);
  const auto object = proflaunch::osrt::poll_object(fds, count);
  timing.done(result, object.object, object.kind, CALLER);
  return result;
}

PROFLAUNCH_EXPORT int __ppoll_chk(pollfd* fds, nfds_t count, const timespec* timeout, const sigset_t* mask,
                                  size_t fds_bytes) {
  const bool may_wait = proflaunch::osrt::nonzero(timeout);
  sigset_t copy;
  const sigset_t* effective = may_wait ? proflaunch::osrt::with_sampling_signal(mask, copy) : mask;
  SamplingSignalHold hold(may_wait && mask == nullptr);
  BlockingCall timing(Call::__ppoll_chk);
  const int result = REAL(__ppoll_chk)(fds, count, timeout, effective, fds_bytes);
  const auto object = proflaunch::osrt::poll_object(fds, count);
  timing.done(result, object.object, object.kind, CALLER);
  return result;
}

// ---- the futex system call through syscall(): only its waits are timed.
// syscall() takes up to six arguments in registers and on the stack as
// longs, as the kernel does; the wrapper passes six on whatever it got.
// A caller that passes fewer leaves the sixth (read from its stack, as
// glibc's own syscall() reads it) as whatever lies there: not instrumented
// by ASan, which takes that read of the caller's frame for an underflow.

__attribute__((no_sanitize("address"))) PROFLAUNCH_EXPORT long syscall(long number, ...) noexcept {
  va_list arguments;
  va_start(arguments, number);
  long a[6];
  for (long& argument : a) argument = va_arg(arguments, long);
  va_end(arguments);
  using SyscallFunction = long(long, ...);
  SyscallFunction* real = proflaunch::osrt::real<SyscallFunction>(Call::futex);
  if (number != SYS_futex || !proflaunch::osrt::futex_waits(a[1]))
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  SamplingSignalHold hold(proflaunch::osrt::futex_timed_wait_not_restarted(a[1], a[3]));
  BlockingCall timing(Call::futex);
  const long result = real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
  timing.done(result, static_cast<uint64_t>(a[0]), CALLER);
  return result;
}

}  // extern "C"
