#include "preload/intercept/hook_table.h"

#include <cstring>

#include "preload/intercept/real_symbols.h"

namespace proflaunch::intercept {

bool HookTable::set(const HookEntry* entries, size_t count) {
  for (size_t i = 1; i < count; ++i) {
    if (std::strcmp(entries[i - 1].symbol, entries[i].symbol) >= 0) return false;
  }
  entries_ = entries;
  count_ = count;
  return true;
}

const HookEntry* HookTable::find_symbol(const char* symbol) const {
  size_t lo = 0, hi = count_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int c = std::strcmp(entries_[mid].symbol, symbol);
    if (c == 0) return &entries_[mid];
    if (c < 0) lo = mid + 1; else hi = mid;
  }
  return nullptr;
}

void* real_function(const HookEntry& entry) {
  void* real = __atomic_load_n(entry.real, __ATOMIC_ACQUIRE);
  if (real != nullptr) return real;
  real = resolve_real_symbol(entry.symbol, entry.library_prefix);
  if (real != nullptr) offer_real_function(entry, real);
  return __atomic_load_n(entry.real, __ATOMIC_ACQUIRE);
}

void offer_real_function(const HookEntry& entry, void* real) {
  // dlsym on a handle whose scope includes the preload (dlopen(NULL)) finds
  // the shim's own export; taking it as "real" would recurse forever.
  if (real == nullptr || is_own_address(real)) return;
  void* expected = nullptr;
  __atomic_compare_exchange_n(entry.real, &expected, real, false, __ATOMIC_ACQ_REL,
                              __ATOMIC_ACQUIRE);
}

}  // namespace proflaunch::intercept
