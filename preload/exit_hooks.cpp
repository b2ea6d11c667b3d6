// _exit and _Exit skip atexit handlers and library destructors, so the shim's
// own destructor never runs: Python's os._exit (every multiprocessing worker
// ends with it) would lose the last flush interval and its SectionEnd.
// Interposed to finish the section first. exit() itself is not: it runs our
// destructor, and glibc's internal call to _exit does not pass through here.
//
// _exit is async-signal-safe and is called from signal handlers and vfork
// children; finish() only waits on the writer through a futex (bounded), and
// does nothing at all in a process it does not own.
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/process_hooks.h"
#include "preload/real_symbols.h"
#include "preload/runtime.h"

namespace proflaunch {
namespace {

using ExitFunction = void(int);
ExitFunction* g_real_exit = nullptr;
ExitFunction* g_real_Exit = nullptr;

[[noreturn]] void exit_now(ExitFunction* real, int status) {
  if (runtime::active() && runtime::owns_this_process()) runtime::finish();
  if (real != nullptr) real(status);
  for (;;) syscall(SYS_exit_group, status);
}

}  // namespace

void init_exit_hooks() noexcept {
  g_real_exit = resolve_next<ExitFunction>("_exit");
  g_real_Exit = resolve_next<ExitFunction>("_Exit");
}

}  // namespace proflaunch

extern "C" {

__attribute__((visibility("default"))) void _exit(int status) {
  proflaunch::exit_now(proflaunch::g_real_exit, status);
}

__attribute__((visibility("default"))) void _Exit(int status) {
  proflaunch::exit_now(proflaunch::g_real_Exit, status);
}

}  // extern "C"
