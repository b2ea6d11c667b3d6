// Native stacks with libunwind's unw_backtrace.
//
// unw_backtrace walks with libunwind's per-thread cache of frame layouts:
// ~0.2 us for 24 frames once warm (the first call on a thread builds the
// cache: ~0.5 ms). An unw_step loop costs 10-45 us and glibc's backtrace()
// ~3 us; a frame-pointer walk is cheaper still but breaks on every library
// built without frame pointers (nearly all of them).
//
// libunwind is loaded with dlopen(RTLD_LOCAL), never linked: libunwind.so
// exports a weak `backtrace` and its own _Unwind_RaiseException & co., and as
// a dependency of a preloaded library it would sit in the program's global
// scope, where it could replace glibc's backtrace() and libgcc's C++
// exception unwinder for the whole program.
#pragma once

#include <cstdint>

namespace proflaunch::stacks {

// Loads libunwind and finds the address ranges whose frames are left out
// (the shim itself, libunwind). Cold; false when libunwind is unavailable.
bool init_native_unwinder() noexcept;

struct NativeStack {
  uint32_t count = 0;
  bool truncated = false;
};

// Fills `frames` with up to `depth` return addresses of the calling thread,
// innermost first, without the shim's and libunwind's own frames. Lock-free,
// allocation-free once the thread's libunwind cache exists.
NativeStack capture_native_stack(uint64_t* frames, uint32_t depth) noexcept;

}  // namespace proflaunch::stacks
