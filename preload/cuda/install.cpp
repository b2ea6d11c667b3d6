// libproflaunch.so's hook sets: the CUDA driver and runtime hooks.
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/hook_registry.h"
#include "preload/hook_sets.h"
#include "preload/nccl/nccl_apis.h"
#include "preload/runtime.h"
#include "preload/stacks/stacks.h"

namespace proflaunch {

void start_hook_sets(const Config& config) noexcept {
  cuda::select_gpu_timing(config.gpu_timing == GpuTiming::kEvents);
  if (cuda::install_cuda_hooks(runtime::recording()) && runtime::recording()) nccl::define_nccl_apis();
  stacks::start_stacks(config);
}

}  // namespace proflaunch
