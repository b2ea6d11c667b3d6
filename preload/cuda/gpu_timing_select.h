// Which GPU timing backend the hooks use (--gpu-timing): the one place that
// knows every backend. The hooks reach the chosen one through gpu_timing.h.
#pragma once

#include "preload/config.h"

namespace proflaunch::cuda {

// At shim start, from --gpu-timing: events, CUPTI (auto: CUPTI when it can
// subscribe), falling back to events, saying why, when CUPTI cannot be used.
void select_gpu_timing(GpuTiming timing) noexcept;

}  // namespace proflaunch::cuda
