#include "preload/capture/carried_state.h"

#include <atomic>
#include <cstring>

#include "formats/records.h"

namespace proflaunch::capture {
namespace {

constexpr size_t kMaxCarryListeners = 4;
std::atomic<CarryFn> g_listeners[kMaxCarryListeners];

}  // namespace

void add_carry_listener(CarryFn listener) noexcept {
  for (auto& slot : g_listeners) {
    CarryFn expected = nullptr;
    if (slot.compare_exchange_strong(expected, listener, std::memory_order_acq_rel) || expected == listener) return;
  }
}

void run_carry_listeners(void (*carry)(const void* record, uint16_t bytes)) noexcept {
  for (auto& slot : g_listeners)
    if (CarryFn listener = slot.load(std::memory_order_acquire)) listener(carry);
}

bool mark_carried(void* record, uint16_t bytes, uint64_t at_ns) noexcept {
  uint16_t kind;
  std::memcpy(&kind, record, sizeof kind);
  if (!format::has_api_span(kind) || bytes < format::kApiSpanOffset + sizeof(format::ApiSpan)) return false;
  auto* at = static_cast<uint8_t*>(record) + format::kApiSpanOffset;
  format::ApiSpan span;
  std::memcpy(&span, at, sizeof span);
  span.begin_ns = span.end_ns = at_ns;
  span.flags |= format::kApiCarried;
  span.correlation_id = 0;
  std::memcpy(at, &span, sizeof span);
  return true;
}

}  // namespace proflaunch::capture
