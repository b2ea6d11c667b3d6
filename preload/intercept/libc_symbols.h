// Finding libc's own dlsym/dlvsym without calling dlsym.
//
// The shim exports dlsym and dlvsym. Any call to them from inside the shim
// binds to the shim's own definitions (the preload is first in the global
// scope), so the real ones cannot be fetched with dlsym/dlvsym themselves.
// Instead we read libc's dynamic symbol table in memory. This allocates
// nothing and takes no lock other than the loader's, so it is safe from the
// very first dlsym call, which can come from another library's constructor
// before our own constructor has run.
#pragma once

namespace proflaunch::intercept {

// Address of the default-version definition of `name` in the loaded libc
// (libc.so.6), or nullptr if libc or the symbol cannot be found.
void* find_libc_symbol(const char* name);

// The definition of `name` that dlsym(RTLD_NEXT, name) called from the shim
// would return: the first object after the shim's own in the loader's list
// that defines it (a sanitizer's interceptor when the shim is linked into a
// program, libc when the shim is preloaded), found without dlsym. Falls
// back to libc's definition.
void* find_next_symbol(const char* name);

// Looks `name` up in the dynamic symbol table of the loaded object whose base
// address is `base` (e.g. from dl_iterate_phdr). Exposed for tests.
void* find_symbol_in_object(const void* dynamic, unsigned long base, const char* name);

}  // namespace proflaunch::intercept
