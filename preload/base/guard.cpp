#include "preload/base/guard.h"

namespace proflaunch {

__thread __attribute__((tls_model("initial-exec"))) uint32_t tls_guard_depth = 0;

}  // namespace proflaunch
