#include "preload/writer/tick_converter.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "preload/base/clock.h"

namespace proflaunch {
namespace {

using format::ApiSpan;
using format::RecordKind;

constexpr size_t kSpanOffset = format::kApiSpanOffset;

uint64_t rounded(double ns) noexcept { return ns <= 0 ? 0 : static_cast<uint64_t>(ns + 0.5); }

}  // namespace

void TickConverter::sample() noexcept {
  if (!g_ticks_are_tsc) return;
  if (count_ == 0 && g_tick_origin.ticks != 0) add_sample(g_tick_origin);
  add_sample(source_());
}

void TickConverter::add_sample(TickSample next) noexcept {
  if (count_ > 0 && (next.ticks <= newest().ticks || next.ns <= newest().ns)) return;  // no progress
  if (count_ == 0) {
    first_ = next;
  } else {
    Entry& last = history_[(count_ - 1) % kHistory];
    last.rate = static_cast<double>(next.ns - last.ns) / static_cast<double>(next.ticks - last.ticks);
  }
  history_[count_++ % kHistory] = Entry{next.ns, next.ticks, 0.0};
  if (next.ticks > first_.ticks)
    long_rate_ = static_cast<double>(next.ns - first_.ns) / static_cast<double>(next.ticks - first_.ticks);
}

uint64_t TickConverter::to_ns(uint64_t ticks) noexcept {
  if (!g_ticks_are_tsc || count_ == 0) return ticks;
  if (ticks > newest().ticks) sample();  // a record made after the latest sample
  const Entry& last = newest();
  if (ticks >= last.ticks)
    return last.ns + static_cast<uint64_t>(static_cast<double>(ticks - last.ticks) * long_rate_ + 0.5);
  const size_t n = retained_samples();
  // Most ticks fall in the newest segment.
  if (n >= 2) {
    const Entry& previous = retained(n - 2);
    if (ticks >= previous.ticks)
      return previous.ns + static_cast<uint64_t>(static_cast<double>(ticks - previous.ticks) * previous.rate + 0.5);
  }
  const Entry& oldest = retained(0);
  if (ticks < oldest.ticks) {
    const double back = static_cast<double>(oldest.ticks - ticks);
    if (first_.ticks < oldest.ticks) {  // between the first sample and the history
      const double rate = static_cast<double>(oldest.ns - first_.ns) / static_cast<double>(oldest.ticks - first_.ticks);
      return rounded(static_cast<double>(oldest.ns) - back * rate);
    }
    // Before the first sample: the first segment's rate, backwards.
    return rounded(static_cast<double>(oldest.ns) - back * (n >= 2 ? oldest.rate : long_rate_));
  }
  // The last retained sample at or before `ticks`.
  size_t low = 0, high = n - 1;  // retained(low).ticks <= ticks < retained(high).ticks
  while (high - low > 1) {
    const size_t mid = low + (high - low) / 2;
    if (retained(mid).ticks <= ticks) low = mid;
    else high = mid;
  }
  const Entry& a = retained(low);
  return a.ns + static_cast<uint64_t>(static_cast<double>(ticks - a.ticks) * a.rate + 0.5);
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
