// Best-effort flush when the program dies of a fatal signal, without changing
// how it dies.
//
// Which signals, and why only these:
//  - SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL: handled only where the
//    disposition is SIG_DFL when the shim starts (before the program's own
//    initialization). If the program installs its own handler later, its
//    handler replaces ours: the program wins, and we lose only the flush.
//  - SIGINT, SIGTERM, SIGHUP: never touched. Python installs its
//    KeyboardInterrupt handler only if SIGINT is SIG_DFL at startup, and
//    signal.getsignal() would report our handler as None, which breaks code
//    that saves and restores handlers. A process killed by these loses at
//    most the flush interval, like SIGKILL.
//
// The handler is async-signal-safe: it wakes the writer through a futex
// and waits on another for at most kCrashFlushTimeoutMs, never allocating or
// locking. Then it restores the previous disposition and lets the signal take
// its original course: a hardware fault re-executes the faulting instruction
// on return and faults again; a signal sent by a process (kill, abort) is
// raised again. So exit status and core dumps stay what they were.
#pragma once

namespace proflaunch {

inline constexpr unsigned kCrashFlushTimeoutMs = 500;
// With --ring: writing out up to the ring's bound (256 MiB by default) at
// disk speed.
inline constexpr unsigned kCrashDumpTimeoutMs = 5000;

void install_crash_handlers() noexcept;

}  // namespace proflaunch
