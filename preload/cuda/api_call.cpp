#include "preload/cuda/api_call.h"

#include <unistd.h>

namespace proflaunch::cuda {

__thread __attribute__((tls_model("initial-exec"))) RuntimeFrame tls_runtime_frame;

namespace {
__thread __attribute__((tls_model("initial-exec"))) uint64_t tls_correlation_base;
__thread __attribute__((tls_model("initial-exec"))) uint64_t tls_correlation_count;
}  // namespace

uint64_t next_correlation_id() noexcept {
  if (__builtin_expect(tls_correlation_base == 0, 0)) {
    // Linux tids fit in 22 bits; 40 bits of count per thread never wrap.
    tls_correlation_base = static_cast<uint64_t>(gettid()) << 40;
  }
  return tls_correlation_base | ++tls_correlation_count;
}

}  // namespace proflaunch::cuda
