#include "tools/proftrace/stats/category_timeline.h"

#include <algorithm>

namespace proflaunch::tools::stats {

void CategoryTimeline::add(uint64_t start_ns, uint64_t end_ns, TimeCategory category, uint64_t device) {
  if (end_ns <= start_ns || category >= TimeCategory::kCount) return;
  waiting_.push(Interval{start_ns, end_ns, category, device});
  while (waiting_.size() > window_) {
    const Interval next = waiting_.top();
    waiting_.pop();
    sweep(next);
  }
}

void CategoryTimeline::finish() {
  while (!waiting_.empty()) {
    const Interval next = waiting_.top();
    waiting_.pop();
    sweep(next);
  }
  uint64_t last = frontier_;
  for (uint64_t until : busy_until_) last = std::max(last, until);
  advance(last);
}

void CategoryTimeline::sweep(const Interval& interval) {
  if (!started_) {
    started_ = true;
    frontier_ = interval.start;
    origin_ = interval.start;
  }
  if (interval.start < frontier_) ++late_;
  advance(interval.start);
  const size_t c = static_cast<size_t>(interval.category);
  busy_until_[c] = std::max(busy_until_[c], interval.end);
  if (is_gpu_category(interval.category)) {
    // Taken in start order, so the union grows at its end only.
    uint64_t& until = device_until_[interval.device];
    uint64_t& busy = device_busy_[interval.device];
    const uint64_t from = std::max(interval.start, until);
    if (interval.end > from) busy += interval.end - from;
    until = std::max(until, interval.end);
  }
}

void CategoryTimeline::advance(uint64_t to_ns) {
  while (frontier_ < to_ns) {
    // Every category busy beyond the frontier covers it from the frontier
    // on (intervals come in start order): the first of them wins until it
    // ends or `to_ns`.
    size_t top = kTimeCategories;
    for (size_t c = 0; c < kTimeCategories; ++c)
      if (busy_until_[c] > frontier_) {
        top = c;
        break;
      }
    if (top == kTimeCategories) {
      frontier_ = to_ns;  // nothing ran: CPU-only, the remainder of a window
      return;
    }
    const uint64_t end = std::min(to_ns, busy_until_[top]);
    record(static_cast<TimeCategory>(top), frontier_, end);
    frontier_ = end;
  }
}

namespace {

// origin + bins * width, at most UINT64_MAX (a damaged trace's timestamps
// can lie near 2^64, where the sum wraps).
uint64_t bins_end(uint64_t origin, uint64_t bins, uint64_t width) {
  uint64_t span = 0, end = 0;
  if (__builtin_mul_overflow(bins, width, &span) || __builtin_add_overflow(origin, span, &end)) return UINT64_MAX;
  return end;
}

}  // namespace

void CategoryTimeline::grow_to(uint64_t end_ns) {
  if (bins_.empty()) bins_.resize(kTimelineBins);
  // Until the bins reach end_ns (or the end of the clock: width_ stops at
  // 2^47, which covers any span of 2^64 ns).
  while (end_ns > bins_end(origin_, kTimelineBins, width_) && width_ < (uint64_t{1} << 47)) {
    for (size_t i = 0; i < kTimelineBins / 2; ++i)
      for (size_t c = 0; c < kTimeCategories; ++c) bins_[i][c] = bins_[2 * i][c] + bins_[2 * i + 1][c];
    std::fill(bins_.begin() + kTimelineBins / 2, bins_.end(), std::array<uint64_t, kTimeCategories>{});
    width_ *= 2;
  }
}

void CategoryTimeline::record(TimeCategory category, uint64_t begin_ns, uint64_t end_ns) {
  const size_t c = static_cast<size_t>(category);
  totals_[c] += end_ns - begin_ns;
  grow_to(end_ns);
  for (uint64_t at = begin_ns; at < end_ns;) {
    const uint64_t bin = std::min<uint64_t>((at - origin_) / width_, kTimelineBins - 1);
    const uint64_t until = std::min(end_ns, bins_end(origin_, bin + 1, width_));
    bins_[bin][c] += until - at;
    at = until;
  }
}

std::array<double, kTimeCategories> CategoryTimeline::breakdown(uint64_t begin_ns, uint64_t end_ns) const {
  std::array<double, kTimeCategories> result{};
  if (bins_.empty() || end_ns <= begin_ns) return result;
  const uint64_t from = std::max(begin_ns, origin_);
  const uint64_t to = std::min(end_ns, bins_end(origin_, kTimelineBins, width_));
  for (uint64_t at = from; at < to;) {
    const uint64_t bin = std::min<uint64_t>((at - origin_) / width_, kTimelineBins - 1);
    const uint64_t until = std::min(to, bins_end(origin_, bin + 1, width_));
    // A bin only partly inside: its time in proportion (exact at 1 ns bins).
    const double share = double(until - at) / double(width_);
    for (size_t c = 0; c < kTimeCategories; ++c) result[c] += double(bins_[bin][c]) * share;
    at = until;
  }
  return result;
}

}  // namespace proflaunch::tools::stats
