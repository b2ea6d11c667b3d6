// _exit and _Exit skip atexit handlers and library destructors, so the shim's
// own destructor never runs: Python's os._exit (every multiprocessing worker
// ends with it) would lose the last flush interval and its SectionEnd.
// Interposed to finish the section first. exit() itself is not: it runs our
// destructor, and glibc's internal call to _exit does not pass through here.
//
// _exit is async-signal-safe and is called from signal handlers and vfork
// children; finish() only waits on the writer through a futex (bounded), and
// does nothing at all in a process it does not own.
//
// exit() is interposed for one case: two threads calling it at once. glibc
// runs the atexit handlers and the libraries' destructors (the shim's finish)
// in whichever thread takes them, and the other goes on to _exit - glibc's
// internal one, not interposable - as soon as none is left, ending the
// process while the first may still be flushing: a program whose worker
// threads all failed and exited lost its whole trace (its process was not in
// the file at all). A second thread to enter exit() finishes the section
// first (or waits for the thread that is finishing it); what the first
// thread's atexit handlers would still have recorded is not recorded.
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>

#include "preload/intercept/real_symbols.h"
#include "preload/process/lifecycle.h"
#include "preload/process/process_hooks.h"

namespace proflaunch {
namespace {

using ExitFunction = void(int);
ExitFunction* g_real_exit = nullptr;
ExitFunction* g_real_Exit = nullptr;
ExitFunction* g_real_libc_exit = nullptr;
std::atomic<pid_t> g_first_exiting_thread{0};

[[noreturn]] void exit_now(ExitFunction* real, int status) {
  runtime::finish();  // nothing in a process the shim does not follow; waits for another thread's finish
  if (real != nullptr) real(status);
  for (;;) syscall(SYS_exit_group, status);
}

}  // namespace

void init_exit_hooks() noexcept {
  g_real_exit = intercept::resolve_next<ExitFunction>("_exit");
  g_real_Exit = intercept::resolve_next<ExitFunction>("_Exit");
  g_real_libc_exit = intercept::resolve_next<ExitFunction>("exit");
}

}  // namespace proflaunch

extern "C" {

__attribute__((visibility("default"))) void _exit(int status) {
  proflaunch::exit_now(proflaunch::g_real_exit, status);
}

__attribute__((visibility("default"))) void _Exit(int status) {
  proflaunch::exit_now(proflaunch::g_real_Exit, status);
}

__attribute__((visibility("default"))) void exit(int status) {
  using namespace proflaunch;
  const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
  pid_t first = 0;
  // finish() does nothing in a process the shim does not follow, and waits
  // for the other thread's flush when it is already finishing.
  if (!g_first_exiting_thread.compare_exchange_strong(first, self, std::memory_order_acq_rel) && first != self)
    runtime::finish();
  ExitFunction* real = g_real_libc_exit != nullptr ? g_real_libc_exit : intercept::resolve_next<ExitFunction>("exit");
  if (real != nullptr) real(status);
  for (;;) syscall(SYS_exit_group, status);
}

}  // extern "C"
