#include "preload/intercept/hook_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "preload/base/log.h"
#include "preload/intercept/dlsym_interposer.h"
#include "preload/intercept/real_symbols.h"
#include "preload/record/api_catalog.h"

namespace proflaunch::hooks {

uint8_t g_counted_apis[kCountedApiSlots];

namespace {

constexpr size_t kMaxHooks = 2048;
intercept::HookEntry g_sorted[kMaxHooks];
intercept::HookTable g_table;
// The rows cuGetProcAddress can name (api_name set), sorted by API name.
const intercept::HookEntry* g_by_api_name[kMaxHooks];
size_t g_by_api_name_count = 0;

constexpr size_t kMaxLibraries = 8;
ApiTable g_api_sources[kMaxLibraries];
size_t g_api_source_count = 0;

// Called for every dlsym on a handle in the process (Python resolves each
// extension module's init function this way): one or two character tests
// reject nearly everything before the binary search.
bool wants(const char* name) {
  if (name[0] == 'c') return name[1] == 'u' && g_table.contains(name);
  // __cuda*, __hip*, and HIP's few C++-linkage exports (_Z..hip...)
  if (name[0] == '_')
    return ((name[1] == '_' && (name[2] == 'c' || name[2] == 'h')) || name[1] == 'Z') && g_table.contains(name);
  if (name[0] == 'n') return name[1] == 'c' && g_table.contains(name);  // NCCL
  if (name[0] == 'h') return name[1] == 'i' && g_table.contains(name);  // HIP
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

bool name_api(uint16_t api, ApiName* name) {
  for (size_t s = 0; s < g_api_source_count; ++s) {
    const ApiTable& source = g_api_sources[s];
    for (size_t i = 0; i < source.count; ++i) {
      if (source.entries[i].api != api) continue;
      *name = ApiName{source.entries[i].name, source.domain, source.vendor};
      return true;
    }
  }
  return false;
}

const ApiTableEntry* find_api(std::string_view name) {
  for (size_t s = 0; s < g_api_source_count; ++s) {
    const ApiTable& table = g_api_sources[s];
    for (size_t i = 0; i < table.count; ++i)
      if (name == table.entries[i].name) return &table.entries[i];
  }
  return nullptr;
}

struct CountedSetting {
  bool unknown_warned = false;
};

void apply_counted_item(const char* name, size_t length, bool counted, void* context) {
  const std::string_view item(name, length);
  if (item == "default" || item == "none") {
    for (size_t s = 0; s < g_api_source_count; ++s) {
      const ApiTable& table = g_api_sources[s];
      for (size_t i = 0; i < table.count; ++i)
        g_counted_apis[table.entries[i].api & (kCountedApiSlots - 1)] = item == "default" && table.entries[i].counted;
    }
    return;
  }
  if (const ApiTableEntry* api = find_api(item)) {
    g_counted_apis[api->api & (kCountedApiSlots - 1)] = counted;
    return;
  }
  auto* setting = static_cast<CountedSetting*>(context);
  if (!setting->unknown_warned) {
    setting->unknown_warned = true;
    char line[256];
    std::snprintf(line, sizeof line, "PROFLAUNCH_COUNTED: no API is called '%.*s'; ignored", static_cast<int>(length),
                  name);
    print_line(line);
  }
}

}  // namespace

const intercept::HookTable& hook_table() { return g_table; }

size_t known_api_count() {
  size_t count = 0;
  for (size_t s = 0; s < g_api_source_count; ++s) count += g_api_sources[s].count;
  return count;
}

KnownApi known_api(size_t index) {
  for (size_t s = 0; s < g_api_source_count; ++s) {
    const ApiTable& table = g_api_sources[s];
    if (index < table.count) return {table.entries[index].api, table.entries[index].name, table.entries[index].counted};
    index -= table.count;
  }
  return {};
}

const intercept::HookEntry* proc_address_row(const char* api_name, int version, bool per_thread, void* answer) {
  auto less = [](const intercept::HookEntry* row, const char* name) { return std::strcmp(row->api_name, name) < 0; };
  const intercept::HookEntry* const* first =
      std::lower_bound(g_by_api_name, g_by_api_name + g_by_api_name_count, api_name, less);
  const intercept::HookEntry* const* last = first;
  while (last != g_by_api_name + g_by_api_name_count && std::strcmp((*last)->api_name, api_name) == 0) ++last;
  if (first == last) return nullptr;
  // The few variants of this API, in a small table of their own.
  intercept::HookEntry variants[16];
  size_t count = 0;
  for (auto it = first; it != last && count < std::size(variants); ++it) variants[count++] = **it;
  std::sort(variants, variants + count, [](const intercept::HookEntry& a, const intercept::HookEntry& b) {
    return std::strcmp(a.symbol, b.symbol) < 0;
  });
  intercept::HookTable table;
  if (!table.set(variants, count)) return nullptr;
  // The address `symbol` has among the exports of the library that answered
  // (the driver's own export table) names the ABI variant exactly; the
  // version rules decide otherwise.
  void* library = nullptr;
  Dl_info info{};
  if (answer != nullptr && dladdr(answer, &info) != 0 && info.dli_fname != nullptr)
    library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  const intercept::HookEntry* chosen = table.select_variant(api_name, version, per_thread, answer, [&](const char* s) {
    return library != nullptr ? intercept::real_dlsym()(library, s) : nullptr;
  });
  if (library != nullptr) dlclose(library);
  return chosen != nullptr ? g_table.find_symbol(chosen->symbol) : nullptr;
}

bool install_hooks(const HookLibrary* libraries, size_t library_count, bool recording, const Config& config) noexcept {
  size_t count = 0;
  g_api_source_count = 0;
  for (size_t l = 0; l < library_count && l < kMaxLibraries; ++l) {
    const HookLibrary& library = libraries[l];
    for (size_t f = 0; f < library.family_count; ++f) {
      const HookFamily& family = library.families[f];
      for (size_t i = 0; i < family.count && count < kMaxHooks; ++i) g_sorted[count++] = family.entries[i];
    }
    g_api_sources[g_api_source_count++] = library.apis;
  }
  std::sort(g_sorted, g_sorted + count, [](const intercept::HookEntry& a, const intercept::HookEntry& b) {
    return std::strcmp(a.symbol, b.symbol) < 0;
  });
  if (!g_table.set(g_sorted, count)) return false;
  g_by_api_name_count = 0;
  for (size_t i = 0; i < count; ++i)
    if (g_sorted[i].api_name != nullptr) g_by_api_name[g_by_api_name_count++] = &g_sorted[i];
  std::stable_sort(g_by_api_name, g_by_api_name + g_by_api_name_count,
                   [](const intercept::HookEntry* a, const intercept::HookEntry* b) {
                     return std::strcmp(a->api_name, b->api_name) < 0;
                   });

  CountedSetting setting;
  apply_counted_item("default", 7, true, &setting);
  parse_counted_calls(config.counted_calls, apply_counted_item, &setting);

  if (recording) {
    set_api_namer(name_api);
    intercept::install_symbol_policy(&kPolicy);
  }
  return true;
}

}  // namespace proflaunch::hooks

