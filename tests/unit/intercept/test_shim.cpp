// A miniature shim: the real interception mechanism with a toy policy that
// wraps target_fn. The wrapper multiplies by 100 so tests can see who ran.
#include <cstring>

#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/hook_table.h"
#include "preload/intercept/real_symbols.h"

using namespace proflaunch::intercept;

extern "C" __attribute__((visibility("default"))) int target_fn(int x);

namespace {

void* g_real_target_fn = nullptr;

const HookEntry kEntries[] = {
    {"target_fn", nullptr, 0, false, "libintercept_target", reinterpret_cast<void*>(&target_fn),
     &g_real_target_fn},
};
HookTable g_table;

bool wants(const char* name) { return std::strncmp(name, "target_", 7) == 0; }

void* wrap(const char* name, void* real) {
  const HookEntry* entry = g_table.find_symbol(name);
  if (entry == nullptr) return real;
  offer_real_function(*entry, real);
  return entry->wrapper;
}

bool real_exists(const char* name) { return real_symbol_exists(name, "libintercept_target"); }

const SymbolPolicy kPolicy{wants, wrap, real_exists};

__attribute__((constructor)) void install() {
  g_table.set(kEntries, sizeof kEntries / sizeof kEntries[0]);
  install_symbol_policy(&kPolicy);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int target_fn(int x) {
  auto real = reinterpret_cast<int (*)(int)>(real_function(kEntries[0]));
  return real ? real(x) * 100 : -1;
}

extern "C" __attribute__((visibility("default"))) unsigned long intercept_test_wrapped_count() {
  return dlsym_stats().wrapped;
}
extern "C" __attribute__((visibility("default"))) unsigned long intercept_test_hidden_count() {
  return dlsym_stats().hidden;
}
