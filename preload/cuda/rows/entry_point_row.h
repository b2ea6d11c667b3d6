// cuGetProcAddress (and _v2): how cuBLAS, cuDNN, NCCL and the runtime itself
// reach the driver (they never link libcuda). Whatever the driver answers for
// an entry point is replaced by the wrapper of exactly that ABI variant, and
// the answer becomes that wrapper's real function.
#pragma once

#include "preload/cuda/rows/call_row.h"

namespace proflaunch::cuda {

// Writes over `*pfn` (what cuGetProcAddress(symbol, version, flags) answered)
// the hook registry's wrapper of that ABI variant.
void substitute_proc_address(const char* symbol, void** pfn, int version, cuuint64_t flags) noexcept;

struct EntryPointRow {
  const char* symbol;
  void** pfn;
  int version;
  cuuint64_t flags;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    const CUresult result = ApiCallRow::run<Hook>(describe, call_real);
    if (result == CUDA_SUCCESS && !inside_profiler()) {
      const EntryPointRow row = describe();
      substitute_proc_address(row.symbol, row.pfn, row.version, row.flags);
    }
    return result;
  }
};

namespace rows {
inline EntryPointRow entry_point(const char* symbol, void** pfn, int version, cuuint64_t flags) noexcept {
  return {symbol, pfn, version, flags};
}
}  // namespace rows

}  // namespace proflaunch::cuda
