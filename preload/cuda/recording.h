// Whether a CUDA hook records this call: the shim is recording, the cuda
// domain is selected, and no profiler frame is active on this thread.
#pragma once

#include "preload/config.h"
#include "preload/record/emit.h"
#include "preload/state/runtime_state.h"

namespace proflaunch::cuda {

inline bool cuda_domain_recording() noexcept {
  return runtime::recording() && (trace_domains() & kTraceCuda) != 0;
}

// Whether any domain whose hooks live in preload/cuda records: the cuda
// domain, or the memory domain (allocations). cuGetProcAddress must hand out
// wrappers for either.
inline bool cuda_hooks_recording() noexcept {
  return runtime::recording() && (trace_domains() & (kTraceCuda | kTraceMemory)) != 0;
}

// Whether those hooks follow the program, inside a capture window or
// between two (runtime::active): entry points handed out and kernel names
// learnt between windows are needed by the next one.
inline bool cuda_hooks_active() noexcept {
  return runtime::active() && (trace_domains() & (kTraceCuda | kTraceMemory)) != 0;
}

// Whether the memory domain's hooks (allocations) record now, and whether
// they follow the program (between capture windows too: the live set).
inline bool memory_domain_recording() noexcept {
  return runtime::recording() && (trace_domains() & kTraceMemory) != 0;
}
inline bool memory_domain_active() noexcept {
  return runtime::active() && (trace_domains() & kTraceMemory) != 0;
}

}  // namespace proflaunch::cuda
