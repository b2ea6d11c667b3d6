#include "common/modelled_costs.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "simgpu.h"

namespace {

// The simulated driver's extension entry point, or null on a real driver.
// Looked up in the driver the runtime loaded (RTLD_NOLOAD), so it is the
// very driver the program runs on.
PFN_simgpuSetKernelCost simulator_knob() {
  cudaFree(nullptr);  // initializes the runtime, which loads libcuda.so.1
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) return nullptr;
  return reinterpret_cast<PFN_simgpuSetKernelCost>(dlsym(driver, "simgpuSetKernelCost"));
}

PFN_simgpuSetKernelCost knob() {
  static const PFN_simgpuSetKernelCost knob = simulator_knob();
  return knob;
}

}  // namespace

bool running_on_simulator() { return knob() != nullptr; }

bool set_modelled_kernel_duration(const char* device_name, long duration_ns) {
  const PFN_simgpuSetKernelCost knob = ::knob();
  if (knob == nullptr || device_name == nullptr || duration_ns < 0) return false;
  // No per-wave term: the duration is the same whatever the grid size.
  return knob(device_name, static_cast<unsigned long long>(duration_ns), 0) == 0;
}

bool set_modelled_kernel_duration(const void* host_function, long duration_ns) {
  const char* device_name = nullptr;
  if (cudaFuncGetName(&device_name, host_function) != cudaSuccess) return false;
  return set_modelled_kernel_duration(device_name, duration_ns);
}
