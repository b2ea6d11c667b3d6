// The hooks an injected library carries on top of the core: the CUDA hooks
// in libproflaunch.so, a probe in the core's tests. Each injected library
// defines start_hook_sets(); the load path calls it right after the runtime
// started (recording or not: exported wrappers must always find their real
// functions).
#pragma once

#include <cstddef>

#include "preload/config.h"
#include "preload/intercept/hook_registry.h"

namespace proflaunch {

void start_hook_sets(const Config& config) noexcept;

// The libraries libproflaunch.so hooks (their tables), as start_hook_sets
// hands them to the hook registry.
const hooks::HookLibrary* hooked_libraries(size_t* count) noexcept;

}  // namespace proflaunch
