// Which shared objects a GPU call passes through on its way to the driver:
// the CUDA and HIP runtimes, the driver, the vendors' math, DNN and
// communication libraries, and proflaunch's own shim. A frame in one of them
// is never where the user's code made the call, so call-site attribution
// (StackFormatter::call_site) steps over it. Decided by the module's file
// name alone (tools/README.md, "stats", lists the patterns and why
// framework libraries such as libtorch_cuda are not among them).
#pragma once

#include <string_view>

namespace proflaunch::tools {

// True when the base name of `module_path` matches a pattern of the list,
// e.g. "/usr/local/cuda/lib64/libcublasLt.so.13" or "libcudart.so.13.0.48".
bool is_runtime_or_vendor_module(std::string_view module_path);

}  // namespace proflaunch::tools
