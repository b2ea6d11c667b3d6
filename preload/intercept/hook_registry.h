// Where every library's hooks meet: the CUDA driver and runtime (generated
// from the toolkit's headers, preload/cuda), NCCL (preload/nccl), and the
// APIs they record. One sorted table serves every way a program reaches a
// traced function: the shim's exported symbol, dlsym on a library handle
// (preload/intercept), and cuGetProcAddress. The registry also answers what
// an API id is called (preload/api_catalog.h) and which APIs are counted
// rather than recorded (PROFLAUNCH_COUNTED).
//
// It knows no library: the injected library's hook sets (hook_sets.cpp)
// hand it theirs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/records.h"
#include "preload/config.h"
#include "preload/intercept/hook_table.h"
#include "preload/record/thread_buffer.h"

// Exported hook functions. Everything else in the shim is hidden.
#ifndef PROFLAUNCH_EXPORT
#define PROFLAUNCH_EXPORT __attribute__((visibility("default")))
#endif

// One hand-written table row (NCCL): the exported wrapper `symbol`,
// reachable through cuGetProcAddress(api_name, version >= min_version,
// per-thread flag) when api_name is not null, whose real function is kept
// in `slot`.
#define PROFLAUNCH_HOOK(symbol, api_name, min_version, per_thread, library, slot) \
  ::proflaunch::intercept::HookEntry {                                             \
    #symbol, api_name, min_version, per_thread, library,                          \
        reinterpret_cast<void*>(&::symbol), &slot                                  \
  }

namespace proflaunch::hooks {

// A library's rows (static arrays, never freed).
struct HookFamily {
  const intercept::HookEntry* entries;
  size_t count;
};

// The APIs a library records, by id (ApiSpan::api).
struct ApiTableEntry {
  uint16_t api;
  const char* name;
  bool counted;  // counted rather than recorded unless PROFLAUNCH_COUNTED says otherwise
};
struct ApiTable {
  const ApiTableEntry* entries;
  size_t count;
  format::ApiDomain domain;
  format::Vendor vendor;
};

// Which APIs are counted rather than recorded, by API id: the tables'
// `counted`, changed by PROFLAUNCH_COUNTED. Set by install_hooks, read on
// every hooked call.
extern uint8_t g_counted_apis[kCountedApiSlots];
inline bool counted_api(uint16_t api) noexcept { return g_counted_apis[api & (kCountedApiSlots - 1)] != 0; }

// The real function behind a hand-written wrapper: its slot if the dlsym or
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

// The merged table, sorted by symbol. Built by install_hooks().
const intercept::HookTable& hook_table();

// The row a driver's cuGetProcAddress(api_name, version, per-thread flag)
// answer corresponds to, or null (cold: a binary search by API name).
const intercept::HookEntry* proc_address_row(const char* api_name, int version, bool per_thread, void* answer);

// Every API the registry knows (name, domain, counted default).
struct KnownApi {
  uint16_t api;
  const char* name;
  bool counted_by_default;
};
size_t known_api_count();
KnownApi known_api(size_t index);

// What a library contributes: its rows and the APIs they record.
struct HookLibrary {
  const HookFamily* families;
  size_t family_count;
  ApiTable apis;
};

// At shim start: builds the table from `libraries`, applies
// PROFLAUNCH_COUNTED, names the APIs, and (when `recording`) lets the dlsym
// interposer hand out wrappers. Returns false if the table is inconsistent
// (a duplicate symbol): the hooks then only pass through. May be called
// again (tests); the arrays must outlive the shim.
bool install_hooks(const HookLibrary* libraries, size_t library_count, bool recording, const Config& config) noexcept;

}  // namespace proflaunch::hooks
