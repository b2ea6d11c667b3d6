// The shim's dlclose: the real one, then a look at whether an object went
// away. Another object may later be loaded at its addresses with other
// unwind rules, so every thread's unwind caches must be emptied before they
// are used again (thread_unwind_state.h). dlclose has no caller-relative
// semantics (unlike dlopen and dlsym), so a C wrapper is exact.
#include <dlfcn.h>

#include <atomic>
#include <cerrno>

#include "preload/intercept/dlsym_interposer.h"
#include "preload/stacks/thread_unwind_state.h"

namespace {

using DlcloseFn = int (*)(void* handle);
std::atomic<DlcloseFn> g_next_dlclose{nullptr};

}  // namespace

// No allocation, no lock besides the loader's.
extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
  DlcloseFn next = g_next_dlclose.load(std::memory_order_acquire);
  if (next == nullptr) {
    // Resolved relative to the shim: the next interposer, or libc.
    next = reinterpret_cast<DlcloseFn>(proflaunch::intercept::real_dlsym()(RTLD_NEXT, "dlclose"));
    if (next == nullptr) return -1;
    g_next_dlclose.store(next, std::memory_order_release);
  }
  const int result = next(handle);
  const int saved_errno = errno;
  // Most dlclose calls only drop a reference: the loader's unload counter
  // says whether an object was really unmapped.
  proflaunch::stacks::check_for_unloaded_code();
  errno = saved_errno;
  return result;
}
