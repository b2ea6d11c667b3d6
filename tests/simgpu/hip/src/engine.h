// The internal functions of the device engine (the simulated CUDA driver,
// tests/simgpu/driver/src/module.h) that the HIP front end calls besides the
// cu* API: a module made of kernels known by name, and a launch whose events
// are bound to the kernel's start and end. Declared here rather than
// by including the engine's headers, which redefine how cuda.h names the
// driver's ABI variants.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace simgpu {
CUresult load_named_kernels(const std::vector<std::string>& names, CUctx_st* context, CUmod_st*& module);
CUresult launch_kernel_with_events(CUfunction f, const unsigned grid[3], const unsigned block[3],
                                   unsigned shared_bytes, CUstream stream, void** parameters, void** extra,
                                   CUevent start_event, CUevent stop_event);
}  // namespace simgpu
