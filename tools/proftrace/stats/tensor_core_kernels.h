// Whether a kernel's name says it runs on tensor cores. The trace has no
// instruction mix, so this is a name heuristic in the manner of the PyTorch
// profiler's TensorBoard plugin (after NVIDIA PyProf): the rule, its sources
// and what it misses are in tools/README.md ("Tensor-core kernels").
#pragma once

#include <string_view>

namespace proflaunch::tools::stats {

bool is_tensor_core_kernel(std::string_view name);

}  // namespace proflaunch::tools::stats
