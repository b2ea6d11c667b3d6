// The table of hooked symbols, shared by every way a program can reach a
// traced function: the shim's exported symbol (global scope), dlsym on a
// library handle, and cuGetProcAddress. Each entry is one ABI variant: the
// same API name resolves to different functions by requested version
// (cuMemAlloc vs cuMemAlloc_v2) and by default-stream mode (_ptsz/_ptds),
// and each variant has its own wrapper and its own real function, so the
// shim never hands out a different ABI than the library would.
#pragma once

#include <cstddef>
#include <cstdint>

namespace proflaunch::intercept {

struct HookEntry {
  const char* symbol;          // exported name of this variant, e.g. "cuLaunchKernel_ptsz"
  const char* api_name;        // name given to cuGetProcAddress ("cuLaunchKernel"); null if none
  int min_version;             // first CUDA version (1000*major + 10*minor) mapping api_name here
  bool per_thread;             // a _ptsz/_ptds variant
  const char* library_prefix;  // file-name prefix of the library that defines it ("libcuda.so")
  void* wrapper;               // the shim's function with exactly this variant's signature
  void** real;                 // where the wrapper finds the real function (set at most once)
};

// Entries must outlive the table (static arrays). Not thread-safe to set
// concurrently with lookups: set once at shim initialization.
class HookTable {
 public:
  // Returns false (and keeps nothing) if `entries` is not sorted by symbol
  // with unique symbols: a programming error the tests catch.
  bool set(const HookEntry* entries, size_t count);

  const HookEntry* find_symbol(const char* symbol) const;

  // True if some entry has this exact symbol. Cheap enough for every dlsym.
  bool contains(const char* symbol) const { return find_symbol(symbol) != nullptr; }

  // The variant a driver's cuGetProcAddress(api_name, version, flags) handed
  // out as `real`. `exported_address(symbol)` gives the address of a symbol
  // in the library that answered (may return null); a variant whose exported
  // address equals `real` is the answer. Otherwise the variant is chosen as
  // the documented rules do: the highest min_version <= version, per-thread
  // if asked for and one exists. Returns null when no variant applies.
  template <typename ExportedAddress>
  const HookEntry* select_variant(const char* api_name, int version, bool per_thread, void* real,
                                  ExportedAddress exported_address) const;

  size_t size() const { return count_; }
  const HookEntry* begin() const { return entries_; }
  const HookEntry* end() const { return entries_ + count_; }

 private:
  // Range of entries sharing api_name (looked up linearly: cold path).
  const HookEntry* entries_ = nullptr;
  size_t count_ = 0;
};

// The real function behind `entry`: its slot if set, else resolved now
// (RTLD_NEXT, then RTLD_LOCAL fallback) and stored. Null if the library is
// not loaded (yet).
void* real_function(const HookEntry& entry);

// Stores `real` in the entry's slot unless one is already there.
void offer_real_function(const HookEntry& entry, void* real);

template <typename ExportedAddress>
const HookEntry* HookTable::select_variant(const char* api_name, int version, bool per_thread,
                                           void* real, ExportedAddress exported_address) const {
  auto same = [](const char* a, const char* b) {
    while (*a && *a == *b) ++a, ++b;
    return *a == *b;
  };
  const HookEntry* by_rule = nullptr;
  const HookEntry* by_rule_legacy = nullptr;
  for (size_t i = 0; i < count_; ++i) {
    const HookEntry& e = entries_[i];
    if (e.api_name == nullptr || !same(e.api_name, api_name)) continue;
    if (real != nullptr && exported_address(e.symbol) == real) return &e;
    if (e.min_version > version) continue;
    const HookEntry*& best = e.per_thread ? by_rule : by_rule_legacy;
    if (best == nullptr || e.min_version > best->min_version) best = &e;
  }
  if (per_thread && by_rule != nullptr) return by_rule;
  return by_rule_legacy;
}

}  // namespace proflaunch::intercept
