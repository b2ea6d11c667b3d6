// The hooks an injected library carries on top of the core: the CUDA hooks
// in libproflaunch.so, a probe in the core's tests. Each injected library
// defines start_hook_sets(); the load path calls it right after the runtime
// started (recording or not: exported wrappers must always find their real
// functions).
#pragma once

#include "preload/config.h"

namespace proflaunch {

void start_hook_sets(const Config& config) noexcept;

}  // namespace proflaunch
