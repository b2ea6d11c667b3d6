#include "preload/cuda/api_call.h"
#include "preload/cuda/library_frame.h"

namespace proflaunch::cuda {

__thread __attribute__((tls_model("initial-exec"))) RuntimeFrame tls_runtime_frame;
__thread __attribute__((tls_model("initial-exec"))) LibraryFrame tls_library_frame;

}  // namespace proflaunch::cuda
