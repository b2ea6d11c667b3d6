#include "preload/tick_converter.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "preload/clock.h"

namespace proflaunch {
namespace {

using format::ApiSpan;
using format::RecordKind;

constexpr size_t kSpanOffset = format::kApiSpanOffset;

// a.ns + (b.ns - a.ns) * (t - a.ticks) / (b.ticks - a.ticks), for any t
// (extrapolates outside [a, b]). Exact at both ends after rounding.
uint64_t on_line(const TickSample& a, const TickSample& b, uint64_t t) noexcept {
  const double span_ns = static_cast<double>(b.ns) - static_cast<double>(a.ns);
  const double span_ticks = static_cast<double>(b.ticks) - static_cast<double>(a.ticks);
  const double ns = static_cast<double>(a.ns) +
                    span_ns * (static_cast<double>(t) - static_cast<double>(a.ticks)) / span_ticks;
  return ns <= 0 ? 0 : static_cast<uint64_t>(std::llround(ns));
}

}  // namespace

void TickConverter::sample() noexcept {
  if (!g_ticks_are_tsc) return;
  if (count_ == 0 && g_tick_origin.ticks != 0) add_sample(g_tick_origin);
  add_sample(take_tick_sample());
}

void TickConverter::add_sample(TickSample next) noexcept {
  if (count_ > 0 && (next.ticks <= newest().ticks || next.ns <= newest().ns)) return;  // no progress
  if (count_ == 0) first_ = next;
  append(next);
  last_measured_ = next;
  if (last_measured_.ticks > first_.ticks)
    long_rate_ = static_cast<double>(last_measured_.ns - first_.ns) /
                 static_cast<double>(last_measured_.ticks - first_.ticks);
}

uint64_t TickConverter::to_ns(uint64_t ticks) noexcept {
  if (!g_ticks_are_tsc || count_ == 0) return ticks;
  const Sample& last = newest();
  if (ticks >= last.ticks) {
    if (ticks == last.ticks) return last.ns;
    const double ns = static_cast<double>(last.ns) + static_cast<double>(ticks - last.ticks) * long_rate_;
    const uint64_t result = static_cast<uint64_t>(std::llround(ns));
    // Kept, so that later conversions (and the next real sample) continue
    // from it; a measured sample that would go back in time is then skipped.
    if (result > last.ns) append(Sample{result, ticks});
    return result;
  }
  const size_t n = retained_samples();
  const Sample& oldest = retained(0);
  if (ticks < oldest.ticks) {
    if (first_.ticks < oldest.ticks) return on_line(first_, oldest, ticks);
    // Before the first sample: the first segment, extended backwards.
    if (n >= 2) return on_line(oldest, retained(1), ticks);
    const double ns = static_cast<double>(oldest.ns) - static_cast<double>(oldest.ticks - ticks) * long_rate_;
    return ns <= 0 ? 0 : static_cast<uint64_t>(std::llround(ns));
  }
  // The last retained sample at or before `ticks` (n >= 2 here).
  size_t low = 0, high = n - 1;  // retained(low).ticks <= ticks < retained(high).ticks
  while (high - low > 1) {
    const size_t mid = low + (high - low) / 2;
    if (retained(mid).ticks <= ticks) low = mid;
    else high = mid;
  }
  return on_line(retained(low), retained(high), ticks);
}

void TickConverter::convert_record(void* record, uint16_t bytes) noexcept {
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
