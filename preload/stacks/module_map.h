// The module map: every loaded ELF object (path, address range, load bias,
// build id) as ModuleDef records, so that any return address of a stack can
// be mapped to a file and an offset after the run.
//
// Loads and unloads are noticed through dl_iterate_phdr's dlpi_adds and
// dlpi_subs counters, never by wrapping dlopen (a C wrapper around dlopen
// would make every dlopen resolve names relative to the shim's own RUNPATH,
// not the caller's). The map is refreshed on the writer thread every cycle
// and on the cold path before a new stack is defined, so a stack's modules
// are always in the catalog before the stack.
#pragma once

namespace proflaunch::stacks {

// Cheap: one dl_iterate_phdr step. True when objects were loaded or unloaded
// since the last refresh (or no refresh happened yet).
bool modules_changed() noexcept;

// Rescans and defines a ModuleDef for every object loaded since the last
// refresh, and an unloaded ModuleDef for every one that went away. The caller
// holds the stack catalog's mutex. Returns true when something was loaded.
bool refresh_modules_locked() noexcept;

}  // namespace proflaunch::stacks
