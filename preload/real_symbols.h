// The next definition of a symbol we interpose (libc's), resolved once at
// load. Looking it up lazily is not an option for the exec and _exit hooks:
// they may run in a vfork child, where dlsym could block on a loader lock held
// by a parent thread frozen mid-update.
#pragma once

#include <dlfcn.h>

namespace proflaunch {

template <typename Function>
inline Function* resolve_next(const char* name) noexcept {
  return reinterpret_cast<Function*>(dlsym(RTLD_NEXT, name));
}

}  // namespace proflaunch
