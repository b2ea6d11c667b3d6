#include "preload/tick_converter.h"

#include <cmath>
#include <cstdint>
#include <cstddef>
#include <cstring>

#include "preload/clock.h"

namespace proflaunch {
namespace {

using format::ApiSpan;
using format::RecordKind;

constexpr size_t kSpanOffset = format::kApiSpanOffset;

}  // namespace

void TickConverter::sample() noexcept {
  if (!g_ticks_are_tsc) return;
  if (samples_ == 0 && g_tick_origin.ticks != 0) {
    first_ = last_ = g_tick_origin;
    samples_ = 1;
  }
  const Sample next = take_tick_sample();
  if (samples_ > 0 && (next.ticks <= last_.ticks || next.ns <= last_.ns)) return;  // no progress
  if (samples_ == 0) first_ = next;
  previous_ = samples_ > 0 ? last_ : next;
  last_ = next;
  ++samples_;
  if (last_.ticks > first_.ticks)
    long_rate_ = static_cast<double>(last_.ns - first_.ns) / static_cast<double>(last_.ticks - first_.ticks);
}

uint64_t TickConverter::to_ns(uint64_t ticks) const noexcept {
  if (!g_ticks_are_tsc) return ticks;
  double rate = long_rate_;
  if (ticks <= last_.ticks && last_.ticks > previous_.ticks)
    rate = static_cast<double>(last_.ns - previous_.ns) / static_cast<double>(last_.ticks - previous_.ticks);
  const double ns = static_cast<double>(last_.ns) +
                    (static_cast<double>(ticks) - static_cast<double>(last_.ticks)) * rate;
  return ns <= 0 ? 0 : static_cast<uint64_t>(std::llround(ns));
}

void TickConverter::convert_record(void* record, uint16_t bytes) const noexcept {
  if (!g_ticks_are_tsc) return;
  uint16_t kind;
  std::memcpy(&kind, record, sizeof kind);
  if (kind == static_cast<uint16_t>(RecordKind::kLost) && bytes >= sizeof(format::LostRecord)) {
    format::LostRecord lost;
    std::memcpy(&lost, record, sizeof lost);
    lost.first_ns = to_ns(lost.first_ns);
    lost.last_ns = to_ns(lost.last_ns);
    std::memcpy(record, &lost, sizeof lost);
    return;
  }
  if (!format::has_api_span(kind) || bytes < kSpanOffset + sizeof(ApiSpan)) return;
  ApiSpan span;
  auto* at = static_cast<uint8_t*>(record) + kSpanOffset;
  std::memcpy(&span, at, sizeof span);
  span.begin_ns = to_ns(span.begin_ns);
  span.end_ns = to_ns(span.end_ns);
  std::memcpy(at, &span, sizeof span);
}

}  // namespace proflaunch
