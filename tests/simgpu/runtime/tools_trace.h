// The runtime tells the driver's tools interface (simgpu_tools.h) about its
// own API calls, as the real runtime tells the real driver: a tools library
// (the simulated CUPTI) sees runtime calls, and the driver calls one makes
// share its correlation id. Entry points written as `return helper(...);`
// go through traced(); the calls a tool sees are listed in ../README.md.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>

#include "simgpu_tools.h"

namespace simgpu_runtime {

// Null until the driver is loaded (the first runtime call is not traced).
extern std::atomic<const SimgpuToolsInterface*> g_tools;

template <class Body>
cudaError_t traced(const char* name, Body&& body) {
  const SimgpuToolsInterface* tools = g_tools.load(std::memory_order_acquire);
  if (tools == nullptr) return body();
  void* slot = nullptr;
  tools->runtime_enter(name, &slot);
  const cudaError_t result = body();
  tools->runtime_exit(name, int(result), slot);
  return result;
}

}  // namespace simgpu_runtime
