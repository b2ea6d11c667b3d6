#include "preload/cuda/hook_registry.h"

#include <algorithm>
#include <cstring>

#include "preload/cuda/cuda_apis.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/real_symbols.h"
#include "preload/nccl/nccl_hooks.h"

namespace proflaunch::cuda {
namespace {

constexpr size_t kMaxHooks = 512;
intercept::HookEntry g_sorted[kMaxHooks];
intercept::HookTable g_table;

// Called for every dlsym on a handle in the process (Python resolves each
// extension module's init function this way): one or two character tests
// reject nearly everything before the binary search.
bool wants(const char* name) {
  if (name[0] == 'c') return name[1] == 'u' && g_table.contains(name);
  if (name[0] == '_') return name[1] == '_' && name[2] == 'c' && g_table.contains(name);
  if (name[0] == 'n') return name[1] == 'c' && g_table.contains(name);  // NCCL (preload/nccl)
  return false;
}

void* wrap(const char* name, void* real) {
  const intercept::HookEntry* entry = g_table.find_symbol(name);
  if (entry == nullptr) return real;
  intercept::offer_real_function(*entry, real);
  return entry->wrapper;
}

bool real_exists(const char* name) {
  const intercept::HookEntry* entry = g_table.find_symbol(name);
  return entry != nullptr && intercept::real_function(*entry) != nullptr;
}

const intercept::SymbolPolicy kPolicy{wants, wrap, real_exists};

}  // namespace

const intercept::HookTable& hook_table() { return g_table; }

bool install_cuda_hooks(bool recording) noexcept {
  const HookFamily families[] = {launch_hooks(),         copy_hooks(),          sync_hooks(),
                                 object_hooks(),         entry_point_hooks(),   runtime_launch_hooks(),
                                 runtime_api_hooks(),    memory_hooks(),        pool_hooks(),
                                 vmm_hooks(),            runtime_memory_hooks(), nccl::nccl_comm_hooks(),
                                 nccl::nccl_collective_hooks(), nccl::nccl_group_hooks()};
  size_t count = 0;
  for (const HookFamily& family : families) {
    for (size_t i = 0; i < family.count && count < kMaxHooks; ++i) g_sorted[count++] = family.entries[i];
  }
  std::sort(g_sorted, g_sorted + count, [](const intercept::HookEntry& a, const intercept::HookEntry& b) {
    return std::strcmp(a.symbol, b.symbol) < 0;
  });
  if (!g_table.set(g_sorted, count)) return false;
  if (recording) {
    define_cuda_apis();
    intercept::install_symbol_policy(&kPolicy);
  }
  return true;
}

}  // namespace proflaunch::cuda
