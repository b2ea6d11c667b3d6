// NVTX (preload/nvtx): the shim as the NVTX injection library. Every module
// that carries NVTX (the program, each library: PyTorch, NCCL, cuDNN...)
// loads the library named by NVTX_INJECTION64_PATH (the launcher points it
// at the shim) and calls InitializeInjectionNvtx2, which fills that module's
// function tables with the shim's implementations. Each call becomes an
// NvtxEvent record (formats/records.h "NVTX"); domains and names are
// definitions.
#pragma once

#include "preload/intercept/hook_registry.h"

namespace proflaunch::nvtx {

// The NVTX calls as APIs (ids 3000 and up; domain annotation).
hooks::ApiTable nvtx_apis();

}  // namespace proflaunch::nvtx
