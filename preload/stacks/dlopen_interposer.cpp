// The router behind the exported dlopen (dlopen_trampoline.S).
//
// RTLD_DEEPBIND makes a library resolve its symbols in itself and its own
// dependencies before the global scope, so its calls into libcuda bind to the
// real driver and bypass the shim's exported wrappers. Such a library keeps
// working and keeps being traced where it reaches the driver through
// cuGetProcAddress or dlsym (both still answered by the shim); only direct
// calls may be missed. The user is told once.
#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "preload/base/log.h"
#include "preload/intercept/libc_symbols.h"
#include "preload/state/runtime_state.h"

namespace {

std::atomic<void*> g_real_dlopen{nullptr};
std::atomic<bool> g_deepbind_warned{false};

void warn_deepbind(const char* file) {
  if (g_deepbind_warned.exchange(true)) return;
  char name[256];
  std::strncpy(name, file != nullptr ? file : "(the program)", sizeof name - 1);
  name[sizeof name - 1] = '\0';
  proflaunch::print_line("dlopen(", name,
                         ", RTLD_DEEPBIND): calls that library makes to CUDA directly may bypass "
                         "the profiler's hooks; recording continues");
}

}  // namespace

// No allocation, no lock besides the loader's: dlopen can be called from
// anywhere, including before the shim's constructor ran.
extern "C" __attribute__((visibility("hidden"))) void* proflaunch_route_dlopen(const char* file,
                                                                               int mode) {
  void* real = g_real_dlopen.load(std::memory_order_acquire);
  if (real == nullptr) {
    real = proflaunch::intercept::find_libc_symbol("dlopen");
    g_real_dlopen.store(real, std::memory_order_release);
  }
  if ((mode & RTLD_DEEPBIND) != 0 && proflaunch::runtime::active()) warn_deepbind(file);
  return real;
}
