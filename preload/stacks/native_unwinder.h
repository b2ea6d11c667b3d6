// Native call stacks: the shim's own frame walker with a per-thread memory
// of the stacks it walked, and libunwind for what the walker does not do.
//
// The walker steps frames with the rules of the code's .eh_frame
// (eh_frame.h, cached per thread: frame_rules.h) - what libunwind's fast
// path does, for the frames whose shape it can step exactly. A repeated
// stack is not walked again: the thread's last walks from the same start
// (pc, sp) are checked word by word against the stack (walked_stack_cache.h
// says why that is exact) and the matching one gives the stack and its id
// at once. A walk that shares its innermost frames with a stored one starts
// where they part, and stops where it meets the stored one again. A frame
// the walker cannot step (stack realignment, a signal frame, code without
// unwind information, an address outside every loaded object) hands the
// whole stack to libunwind's unw_backtrace, as before.
//
// libunwind is loaded with dlopen(RTLD_LOCAL), never linked: libunwind.so
// exports a weak `backtrace` and its own _Unwind_RaiseException & co., and as
// a dependency of a preloaded library it would sit in the program's global
// scope, where it could replace glibc's backtrace() and libgcc's C++
// exception unwinder for the whole program.
#pragma once

#include <cstdint>

#include "preload/stacks/stack_keys.h"
#include "preload/stacks/thread_unwind_state.h"

namespace proflaunch::stacks {

// Loads libunwind, finds the address ranges whose frames are left out (the
// shim itself, libunwind) and prepares the per-thread states. Cold. False
// when neither the walker nor libunwind can work.
bool init_native_unwinder() noexcept;

// The interned id (stack_catalog.h) of the calling thread's native stack,
// up to `depth` frames innermost first without the shim's own; 0 when there
// is none. The hot path of attach_stacks(): lock-free, allocation-free once
// the thread has its state (its first capture maps it).
uint32_t native_stack_id_here(uint32_t depth) noexcept;

// How capture_native_stack() gets the frames: the same as
// native_stack_id_here() (kCached), the walker without its memory of stacks
// (kWalkOnly), or libunwind alone. For tests and benchmarks.
enum class NativeWalker { kCached, kWalkOnly, kLibunwind };

// Fills `frames` with up to `depth` return addresses of the calling thread,
// innermost first, without the shim's and libunwind's own frames.
NativeStack capture_native_stack(uint64_t* frames, uint32_t depth,
                                 NativeWalker walker = NativeWalker::kCached) noexcept;

// The calling thread's counters (zeros before its first capture).
NativeUnwindStats native_unwind_stats() noexcept;

// Tests: behave as if libunwind could not be loaded (false), or as loaded
// again (true). Returns whether it was loaded at all. Not thread-safe: only
// while no other thread captures stacks.
bool use_libunwind_for_testing(bool use) noexcept;

}  // namespace proflaunch::stacks
