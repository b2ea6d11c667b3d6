#include "preload/intercept/dlsym_interposer.h"

#include <dlfcn.h>

#include <atomic>

#include "preload/intercept/libc_symbols.h"

// Read by the assembly stubs; written once (idempotently) by ensure_real().
extern "C" {
__attribute__((visibility("hidden"))) void* proflaunch_real_dlsym_ptr = nullptr;
__attribute__((visibility("hidden"))) void* proflaunch_real_dlvsym_ptr = nullptr;
}

namespace proflaunch::intercept {
namespace {

std::atomic<const SymbolPolicy*> g_policy{nullptr};
std::atomic<uint64_t> g_wrapped{0};
std::atomic<uint64_t> g_hidden{0};

// Lock-free and idempotent: two threads racing here store the same values.
// No allocation: the first dlsym may run inside malloc's own initialization
// (e.g. a sanitizer or allocator library resolving its symbols).
void ensure_real() {
  if (__atomic_load_n(&proflaunch_real_dlsym_ptr, __ATOMIC_ACQUIRE) != nullptr) return;
  void* dlvsym_fn = find_libc_symbol("dlvsym");
  void* dlsym_fn = find_libc_symbol("dlsym");
  __atomic_store_n(&proflaunch_real_dlvsym_ptr, dlvsym_fn, __ATOMIC_RELEASE);
  __atomic_store_n(&proflaunch_real_dlsym_ptr, dlsym_fn, __ATOMIC_RELEASE);
}

}  // namespace

DlsymFn real_dlsym() {
  ensure_real();
  return reinterpret_cast<DlsymFn>(__atomic_load_n(&proflaunch_real_dlsym_ptr, __ATOMIC_ACQUIRE));
}

DlvsymFn real_dlvsym() {
  ensure_real();
  return reinterpret_cast<DlvsymFn>(__atomic_load_n(&proflaunch_real_dlvsym_ptr, __ATOMIC_ACQUIRE));
}

void install_symbol_policy(const SymbolPolicy* policy) {
  g_policy.store(policy, std::memory_order_release);
}

DlsymStats dlsym_stats() {
  return DlsymStats{g_wrapped.load(std::memory_order_relaxed),
                    g_hidden.load(std::memory_order_relaxed)};
}

}  // namespace proflaunch::intercept

using namespace proflaunch::intercept;

extern "C" __attribute__((visibility("hidden"))) ProflaunchDlsymRoute proflaunch_route_dlsym(
    void* handle, const char* name, const char* version) {
  constexpr ProflaunchDlsymRoute kPassThrough{nullptr, 0};
  ensure_real();
  if (proflaunch_real_dlsym_ptr == nullptr || proflaunch_real_dlvsym_ptr == nullptr) {
    // Without libc's functions there is nothing to jump to: answer NULL as a
    // failed lookup rather than jumping through a null pointer.
    return ProflaunchDlsymRoute{nullptr, 1};
  }
  // RTLD_NEXT is always resolved by libc relative to the true caller; the
  // shim never wraps it (a later interposer asking for the next cuLaunchKernel
  // must get the real one, or it would record the same call twice).
  if (handle == RTLD_NEXT || name == nullptr) return kPassThrough;
  const SymbolPolicy* policy = g_policy.load(std::memory_order_acquire);
  if (policy == nullptr || !policy->wants(name)) return kPassThrough;

  if (handle == RTLD_DEFAULT) {
    // The global scope finds the shim's own export first, which is already a
    // wrapper; only make sure the shim does not invent a symbol the process
    // does not have.
    if (policy->real_exists(name)) return kPassThrough;
    g_hidden.fetch_add(1, std::memory_order_relaxed);
    // Fail the way a missing symbol fails, dlerror() message included, by
    // looking the name up where it cannot be: in libc alone.
    static void* const libc_handle = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    return ProflaunchDlsymRoute{libc_handle ? real_dlsym()(libc_handle, name) : nullptr, 1};
  }

  // A specific handle: resolve for real (the caller's identity does not
  // matter for a handle lookup) and hand out the wrapper.
  void* real = version != nullptr ? real_dlvsym()(handle, name, version) : real_dlsym()(handle, name);
  if (real == nullptr) return ProflaunchDlsymRoute{nullptr, 1};
  void* answer = policy->wrap(name, real);
  if (answer != real) g_wrapped.fetch_add(1, std::memory_order_relaxed);
  return ProflaunchDlsymRoute{answer, 1};
}
