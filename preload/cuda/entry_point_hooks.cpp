// cuGetProcAddress: how cuBLAS, cuDNN, NCCL and the runtime itself reach the
// driver (they never link libcuda). Whatever the driver answers for a traced
// function is replaced by the wrapper of exactly that ABI variant, and the
// answer becomes that wrapper's real function.
#include <cuda.h>
#include <dlfcn.h>

#include <cstring>

#include "preload/cuda/hook_registry.h"
#include "preload/cuda/recording.h"
#include "preload/guard.h"
#include "preload/intercept/dlsym_interposer.h"

// cuda.h maps the name cuGetProcAddress to cuGetProcAddress_v2; the shim must
// also define the original (CUDA 11.3) entry point, which has no status.
#undef cuGetProcAddress
extern "C" CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags);

namespace proflaunch::cuda {
namespace {

void* real_cuGetProcAddress;
void* real_cuGetProcAddress_v2;

// The address `symbol` has among the exports of the library that defines
// `answer` (the driver's own export table), or null. Lets the table name the
// ABI variant exactly instead of inferring it from the version rules.
struct ExportedAddresses {
  void* handle = nullptr;
  explicit ExportedAddresses(void* answer) {
    Dl_info info{};
    if (dladdr(answer, &info) != 0 && info.dli_fname != nullptr)
      handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  }
  ~ExportedAddresses() {
    if (handle != nullptr) dlclose(handle);
  }
  void* operator()(const char* symbol) const {
    return handle != nullptr ? intercept::real_dlsym()(handle, symbol) : nullptr;
  }
};

void substitute_wrapper(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  if (symbol == nullptr || pfn == nullptr || *pfn == nullptr || !cuda_hooks_recording()) return;
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  const intercept::HookTable& table = hook_table();
  // Cheap rejection first: most of the hundreds of lookups a runtime makes
  // at start are for functions the shim does not trace.
  bool known = false;
  for (const intercept::HookEntry& e : table)
    if (e.api_name != nullptr && std::strcmp(e.api_name, symbol) == 0) { known = true; break; }
  if (!known) return;
  const intercept::HookEntry* entry =
      table.select_variant(symbol, version, per_thread, *pfn, ExportedAddresses(*pfn));
  if (entry == nullptr) return;
  intercept::offer_real_function(*entry, *pfn);
  *pfn = entry->wrapper;
}

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuGetProcAddress, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(symbol, pfn, version, flags);
  if (result == CUDA_SUCCESS && !proflaunch::inside_profiler()) substitute_wrapper(symbol, pfn, version, flags);
  return result;
}

PROFLAUNCH_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                               CUdriverProcAddressQueryResult* status) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuGetProcAddress_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(symbol, pfn, version, flags, status);
  if (result == CUDA_SUCCESS && !proflaunch::inside_profiler()) substitute_wrapper(symbol, pfn, version, flags);
  return result;
}

}  // extern "C"

namespace proflaunch::cuda {

HookFamily entry_point_hooks() {
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuGetProcAddress, "cuGetProcAddress", 11030, false, kDriverLibrary, real_cuGetProcAddress),
      PROFLAUNCH_HOOK(cuGetProcAddress_v2, "cuGetProcAddress", 12000, false, kDriverLibrary, real_cuGetProcAddress_v2),
  };
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
