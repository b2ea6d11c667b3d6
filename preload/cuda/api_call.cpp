#include "preload/cuda/api_call.h"

namespace proflaunch::cuda {

__thread __attribute__((tls_model("initial-exec"))) RuntimeFrame tls_runtime_frame;

}  // namespace proflaunch::cuda
