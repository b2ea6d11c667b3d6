// The CUDA hook tables, generated from the toolkit's headers and
// hook_rows.txt (gen/gen_cuda_hooks.py): one wrapper per exported ABI
// variant of the driver and of the runtime.
#pragma once

#include "preload/intercept/hook_registry.h"

namespace proflaunch::cuda {

hooks::HookFamily cuda_driver_hooks();
hooks::HookFamily cuda_runtime_hooks();
hooks::ApiTable cuda_driver_apis();
hooks::ApiTable cuda_runtime_apis();

}  // namespace proflaunch::cuda
