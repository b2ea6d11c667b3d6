// libproflaunch.so's hook sets: the CUDA driver and runtime hooks, NCCL's,
// and the call stacks they take.
#include "preload/cuda/gpu_timing.h"
#include "preload/hook_sets.h"
#include "preload/hooks/hook_registry.h"
#include "preload/runtime.h"
#include "preload/stacks/stacks.h"

namespace proflaunch {

void start_hook_sets(const Config& config) noexcept {
  cuda::select_gpu_timing(config.gpu_timing == GpuTiming::kEvents);
  hooks::install_hooks(runtime::recording(), config);
  stacks::start_stacks(config);
}

}  // namespace proflaunch
