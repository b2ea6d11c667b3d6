// libproflaunch.so's hook sets: the libraries it hooks (the CUDA driver and
// runtime, NCCL, the HIP runtime when built with it), handed to the hook registry, then the GPU timing backend
// and the call stacks the hooks take; the OS runtime hooks (preload/osrt).
#include "preload/hook_sets.h"

#include "preload/cuda/cuda_hooks.h"
#include "preload/cuda/cupti/cupti_interpose.h"
#include "preload/cuda/cupti/pm_sampling.h"
#include "preload/cuda/gpu_timing_select.h"
#if PROFLAUNCH_HIP
#include "preload/hip/hip_hooks.h"
#endif
#include "preload/intercept/hook_registry.h"
#include "preload/nccl/nccl_apis.h"
#include "preload/nccl/nccl_hooks.h"
#include "preload/nvtx/nvtx_hooks.h"
#include "preload/osrt/osrt.h"
#include "preload/sampling/cpu_sampling.h"
#include "preload/stacks/stacks.h"
#include "preload/state/runtime_state.h"

namespace proflaunch {

const hooks::HookLibrary* hooked_libraries(size_t* count) noexcept {
  // CUPTI's coexistence rows ride with the driver's: they record no API.
  static const hooks::HookFamily kDriver[] = {cuda::cuda_driver_hooks(), cuda::cupti_coexistence_hooks()};
  static const hooks::HookFamily kRuntime[] = {cuda::cuda_runtime_hooks()};
  static const hooks::HookFamily kNccl[] = {nccl::nccl_comm_hooks(), nccl::nccl_collective_hooks(),
                                            nccl::nccl_group_hooks()};
#if PROFLAUNCH_HIP
  static const hooks::HookFamily kHip[] = {hip::hip_hooks()};
#endif
  static const hooks::HookLibrary kLibraries[] = {
      {kDriver, std::size(kDriver), cuda::cuda_driver_apis()},
      {kRuntime, std::size(kRuntime), cuda::cuda_runtime_apis()},
      {kNccl, std::size(kNccl), nccl::nccl_apis()},
      // NVTX reaches the shim through its injection tables, not symbols.
      {nullptr, 0, nvtx::nvtx_apis()},
      // The OS runtime hooks are exported libc symbols, not table rows.
      {nullptr, 0, osrt::osrt_apis()},
#if PROFLAUNCH_HIP
      {kHip, std::size(kHip), hip::hip_apis()},
#endif
  };
  *count = std::size(kLibraries);
  return kLibraries;
}

void start_hook_sets(const Config& config) noexcept {
  osrt::resolve_real_functions();
  cuda::select_gpu_timing(config.gpu_timing);
  cuda::start_pm_sampling(config);
  size_t count = 0;
  const hooks::HookLibrary* libraries = hooked_libraries(&count);
  hooks::install_hooks(libraries, count, runtime::active(), config);
  stacks::start_stacks(config);
  osrt::start_osrt(config);
  sampling::start_cpu_sampling(config);
}

}  // namespace proflaunch
