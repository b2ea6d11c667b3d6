#include "common/modelled_costs.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdint>

namespace {

using SetKernelCostFn = int (*)(const char* device_name, uint64_t duration_ns);

// The simulated driver's extension entry point, or null on a real driver.
// libcudart has loaded libcuda.so.1 by the time anything is launched, so
// RTLD_NOLOAD finds the very driver the program runs on.
SetKernelCostFn simulator_knob() {
  cudaFree(nullptr);  // make sure the runtime has loaded the driver
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  return reinterpret_cast<SetKernelCostFn>(dlsym(driver, "simgpuSetKernelCost"));
}

}  // namespace

bool set_modelled_kernel_duration(const char* device_name, long duration_ns) {
  static const SetKernelCostFn knob = simulator_knob();
  if (knob == nullptr || device_name == nullptr || duration_ns < 0) return false;
  return knob(device_name, uint64_t(duration_ns)) == 0;
}

bool set_modelled_kernel_duration(const void* host_function, long duration_ns) {
  const char* device_name = nullptr;
  if (cudaFuncGetName(&device_name, host_function) != cudaSuccess) return false;
  return set_modelled_kernel_duration(device_name, duration_ns);
}
