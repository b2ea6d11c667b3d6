// Where threads wait (OS runtime): the shim's hooks on the libc calls where
// ML programs block (osrt_calls.h), recorded as BlockingCall records with
// the waiting thread's native and Python stack when they block at least
// --osrt-threshold (README.md).
#pragma once

#include <cstdint>

#include "preload/config.h"
#include "preload/intercept/hook_registry.h"

namespace proflaunch::osrt {

// The calls as APIs (ids 3500 and up; domain kOsRuntime), for the hook
// registry, which names them in traces.
hooks::ApiTable osrt_apis() noexcept;

// The real functions (dlsym RTLD_NEXT from the shim). First thing of the
// hook sets' start; calls before it reach libc's own definitions.
void resolve_real_functions() noexcept;

// Starts timing with `config.osrt_threshold_ns` (kOsrtOff: none), once the
// runtime and the stacks have started.
void start_osrt(const Config& config) noexcept;
void start_timing(uint64_t threshold_ns) noexcept;

// Waits made from the library that holds `address_in_library` are not the
// program's (CUPTI's worker threads): their calls are never recorded.
void exclude_library_of(const void* address_in_library) noexcept;
bool excluded_caller(const void* caller) noexcept;

}  // namespace proflaunch::osrt
