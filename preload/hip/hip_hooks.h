// The HIP hooks (AMD): one generated wrapper per function libamdhip64.so.5
// exports (gen/gen_hip_hooks.py, from the real library's export list and
// Debian's HIP headers; hip_rows.txt says what each API records beyond its
// name, duration and result). The wrappers are the CUDA layer's
// (preload/cuda/hook.h): the same Hook and run_hook, other rows.
#pragma once

#include "preload/cuda/hook.h"
#include "preload/hip/hip_private_abi.h"
#include "preload/intercept/hook_registry.h"

namespace proflaunch::hip {

inline constexpr const char* kHipLibrary = "libamdhip64.so";

hooks::HookFamily hip_hooks();
hooks::ApiTable hip_apis();

}  // namespace proflaunch::hip
