// All CUDA hooks in one table: what the dlsym interposer and the
// cuGetProcAddress wrapper consult. Each hook family file (launch, copy,
// sync, objects, entry points, runtime) declares its variants next to its
// wrappers and hands them over here.
#pragma once

#include <cstddef>

#include "preload/intercept/hook_table.h"

// Exported hook functions. Everything else in the shim is hidden.
#define PROFLAUNCH_EXPORT __attribute__((visibility("default")))

// One table row: the exported wrapper `symbol`, reachable through
// cuGetProcAddress(api_name, version >= min_version, per-thread flag) when
// api_name is not null, whose real function is kept in `slot`.
#define PROFLAUNCH_HOOK(symbol, api_name, min_version, per_thread, library, slot) \
  ::proflaunch::intercept::HookEntry {                                             \
    #symbol, api_name, min_version, per_thread, library,                          \
        reinterpret_cast<void*>(&::symbol), &slot                                  \
  }

namespace proflaunch::cuda {

// The real function behind a wrapper: its slot if the dlsym or
// cuGetProcAddress interception already filled it, else resolved now (and
// retried on later calls while the library is not loaded yet).
template <typename Function>
inline Function* real_function(void*& slot, const char* symbol, const char* library) noexcept {
  void* real = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
  if (__builtin_expect(real == nullptr, 0)) {
    const intercept::HookEntry entry{symbol, nullptr, 0, false, library, nullptr, &slot};
    real = intercept::real_function(entry);
  }
  return reinterpret_cast<Function*>(real);
}

// In a wrapper: the real `symbol`, whose slot is real_<symbol> in the same file.
#define PROFLAUNCH_REAL(symbol, library) \
  ::proflaunch::cuda::real_function<decltype(::symbol)>(real_##symbol, #symbol, library)

inline constexpr const char* kDriverLibrary = "libcuda.so";
inline constexpr const char* kRuntimeLibrary = "libcudart.so";

struct HookFamily {
  const intercept::HookEntry* entries;
  size_t count;
};

HookFamily launch_hooks();
HookFamily copy_hooks();
HookFamily sync_hooks();
HookFamily object_hooks();
HookFamily entry_point_hooks();
HookFamily runtime_launch_hooks();
HookFamily runtime_api_hooks();
HookFamily memory_hooks();
HookFamily pool_hooks();
HookFamily vmm_hooks();
HookFamily runtime_memory_hooks();

// The merged table, sorted by symbol. Built by install_cuda_hooks().
const intercept::HookTable& hook_table();

// At shim start: builds the table, names the APIs, and (when `recording`)
// lets the dlsym interposer hand out wrappers. Returns false if the table is
// inconsistent (a duplicate symbol): the hooks then only pass through.
bool install_cuda_hooks(bool recording) noexcept;

}  // namespace proflaunch::cuda
