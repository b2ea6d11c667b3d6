// Finding the function a hook wraps: the definition the program would have
// reached if the shim were not loaded.
#pragma once

#include <dlfcn.h>

namespace proflaunch::intercept {

// The next definition of a libc function the shim interposes (exec, _exit,
// posix_spawn, pthread_setname_np), resolved once at load. Looking it up
// lazily is not an option for the exec and _exit hooks: they may run in a
// vfork child, where dlsym could block on a loader lock held by a parent
// thread frozen mid-update.
template <typename Function>
inline Function* resolve_next(const char* name) noexcept {
  return reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
}

// First dlsym(RTLD_NEXT, name) as seen from the shim. If that fails because the
// library was loaded RTLD_LOCAL (torch extension modules, Triton, our own
// runtime's dlopen of libcuda), search the loaded objects whose file name
// starts with `library_prefix` (e.g. "libcuda.so") through
// dl_iterate_phdr + dlopen(path, RTLD_NOLOAD). Returns nullptr if no loaded
// object defines it (yet: libraries can appear later, so callers retry
// lazily instead of caching a failure).
void* resolve_real_symbol(const char* name, const char* library_prefix);

// True if `address` lies inside the shim's own loaded image. A "real"
// function that is one of the shim's own wrappers would recurse forever.
bool is_own_address(const void* address);

// True if some loaded object other than the shim defines `name`.
bool real_symbol_exists(const char* name, const char* library_prefix);

}  // namespace proflaunch::intercept
