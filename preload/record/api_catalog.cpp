#include "preload/record/api_catalog.h"

#include <atomic>

#include "preload/record/definitions.h"

namespace proflaunch {
namespace {

constexpr uint32_t kApiIds = 1u << 16;
std::atomic<ApiNamer> g_namer{nullptr};
// Writer-owned apart from fork (the child keeps it: the catalog it
// re-writes holds the same definitions).
uint64_t g_defined[kApiIds / 64];

}  // namespace

void set_api_namer(ApiNamer namer) noexcept { g_namer.store(namer, std::memory_order_release); }

void define_api_on_first_use(uint16_t api) noexcept {
  uint64_t& word = g_defined[api / 64];
  const uint64_t bit = uint64_t{1} << (api % 64);
  if (__builtin_expect((word & bit) != 0, 1)) return;
  word |= bit;  // also when unnamed: asked once, not per record
  ApiNamer namer = g_namer.load(std::memory_order_acquire);
  ApiName name;
  if (namer != nullptr && namer(api, &name)) define_api(api, name.name, name.domain, name.vendor);
}

}  // namespace proflaunch
