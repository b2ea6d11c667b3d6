// The NCCL hooks. NCCL exports each ncclX as a weak alias of a strong pncclX.
//
// The shim exports and records ncclX only: that is the API programs and
// frameworks call. pncclX is NCCL's profiling interface (as PMPI is MPI's),
// meant for tools that wrap ncclX; hooking it too would record calls a
// library makes to its own strong symbols twice. Each wrapper calls the
// real ncclX it shadows (the library's weak alias, so another interposer
// between us and NCCL still sees the call).
#pragma once

#include "preload/intercept/hook_registry.h"

namespace proflaunch::nccl {

inline constexpr const char* kNcclLibrary = "libnccl.so";

hooks::HookFamily nccl_comm_hooks();
hooks::HookFamily nccl_collective_hooks();
hooks::HookFamily nccl_group_hooks();

}  // namespace proflaunch::nccl
