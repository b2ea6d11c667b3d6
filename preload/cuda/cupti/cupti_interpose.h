// The CUPTI entry points through which a program takes CUPTI for itself
// (cupti_interpose.cpp): exported by the shim and handed out by its dlsym
// interception, so that the program's first use makes the shim give CUPTI up.
#pragma once

#include "preload/intercept/hook_registry.h"

namespace proflaunch::cuda {

// Rows for the hook registry (no API is recorded for them).
hooks::HookFamily cupti_coexistence_hooks();

}  // namespace proflaunch::cuda
