#include "preload/cuda/rows/entry_point_row.h"

#include "preload/cuda/recording.h"
#include "preload/intercept/hook_registry.h"

namespace proflaunch::cuda {

void substitute_proc_address(const char* symbol, void** pfn, int version, cuuint64_t flags) noexcept {
  if (symbol == nullptr || pfn == nullptr || *pfn == nullptr || !cuda_hooks_active()) return;
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const intercept::HookEntry* row = hooks::proc_address_row(symbol, version, per_thread, *pfn);
  if (row == nullptr) return;
  intercept::offer_real_function(*row, *pfn);
  *pfn = row->wrapper;
}

}  // namespace proflaunch::cuda
