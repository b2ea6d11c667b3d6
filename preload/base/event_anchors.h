// Mapping a GPU's event times to the host clock, for both vendors' event
// timing (CUDA: cuda/gpu_clock.cpp, per context; HIP: hip/hip_timing.cpp, per
// device). Events carry no absolute time, only differences (a float of
// milliseconds: 24 bits of mantissa, 60 ns of resolution at 1 s, 60 us after
// 16 minutes), and a GPU's timer drifts from CLOCK_MONOTONIC by parts per
// million. So an "anchor" event is recorded on an idle private stream and
// waited for, every second while there is work to time, and an operation is
// measured from the newest anchor that was known complete before it was
// submitted: the distance is short (resolution) and recent (drift).
//
// Where an anchor's GPU timestamp lies in host time: the device stamps it as
// soon as it reaches the command, right after the record call; the host
// learns of it only when the wait returns, which on a loaded machine takes
// tens of microseconds to milliseconds. The midpoint of the two would put
// every GPU time that much late (work ending after the blocking call that
// waited for it returned); the start of the record call is the better
// estimate, early by the submission latency only. Of a few tries the one
// with the shortest round trip is kept: a try the scheduler disturbed is the
// one to discard.
//
// Plain data, no allocation: the callers keep these in static storage under
// their own mutex.
#pragma once

#include <cmath>
#include <cstdint>

namespace proflaunch {

inline constexpr uint64_t kAnchorRefreshNs = 1'000'000'000;
inline constexpr int kAnchorTries = 4;

template <typename Event, int N>
class EventAnchors {
 public:
  struct Anchor {
    Event event;
    uint64_t host_ns;       // estimated host time of the anchor's GPU timestamp
    uint64_t published_ns;  // host time it was known complete
  };

  bool empty() const noexcept { return count_ == 0; }
  int count() const noexcept { return count_; }
  const Anchor& at(int i) const noexcept { return anchors_[i]; }

  // A new anchor is due: none yet, or the newest is older than `period`.
  bool due(uint64_t now_ns, uint64_t period_ns = kAnchorRefreshNs) const noexcept {
    return count_ == 0 || now_ns - anchors_[count_ - 1].published_ns >= period_ns;
  }

  // Keeps `anchor` as the newest. Returns the event of the oldest anchor when
  // it had to make room (the caller destroys it), otherwise Event{}.
  Event keep(const Anchor& anchor) noexcept {
    Event evicted{};
    if (count_ == N) {
      evicted = anchors_[0].event;
      for (int i = 1; i < N; ++i) anchors_[i - 1] = anchors_[i];
      --count_;
    }
    anchors_[count_++] = anchor;
    return evicted;
  }

  // The anchor to measure an operation submitted at `submitted_ns` from: the
  // newest known complete by then (so the distance is never negative), or
  // the oldest when none was. Call only when not empty().
  Anchor for_submission(uint64_t submitted_ns) const noexcept {
    for (int i = count_ - 1; i >= 0; --i)
      if (anchors_[i].published_ns <= submitted_ns) return anchors_[i];
    return anchors_[0];
  }

  // A true lower bound on where `event` lies in host time (see anchored_time).
  void raise(Event event, uint64_t host_ns) noexcept {
    for (int i = 0; i < count_; ++i)
      if (anchors_[i].event == event && anchors_[i].host_ns < host_ns) anchors_[i].host_ns = host_ns;
  }

  // Every kept event (to destroy them), then empty.
  template <typename Destroy>
  void clear(Destroy&& destroy) noexcept {
    for (int i = 0; i < count_; ++i) destroy(anchors_[i].event);
    count_ = 0;
  }

 private:
  Anchor anchors_[N]{};
  int count_ = 0;
};

// Takes an anchor: of kAnchorTries tries (`create(&event)`, then
// `record_and_wait(event)` between two reads of `clock()`), the one with the
// shortest round trip; the others are given to `destroy`. False if no try
// worked.
template <typename Anchor, typename Create, typename RecordAndWait, typename Destroy, typename Clock>
bool take_anchor(Anchor& best, Create&& create, RecordAndWait&& record_and_wait, Destroy&& destroy,
                 Clock&& clock) noexcept {
  bool have = false;
  uint64_t best_round_trip_ns = 0;
  for (int i = 0; i < kAnchorTries; ++i) {
    decltype(best.event) event{};
    if (!create(&event)) break;
    const uint64_t before = clock();
    if (!record_and_wait(event)) {
      destroy(event);
      break;
    }
    const uint64_t after = clock();
    if (!have || after - before < best_round_trip_ns) {
      if (have) destroy(best.event);
      best = Anchor{event, before, after};
      best_round_trip_ns = after - before;
      have = true;
    } else {
      destroy(event);
    }
  }
  return have;
}

// The host time of an event `since_anchor_ns` after `anchor_host_ns`. An event
// recorded at `submitted_ns` was stamped no earlier: an anchor that places it
// before that is early itself (its tries were all disturbed, on a loaded
// machine) by at least the difference. Every such bound is true, so the
// anchor only moves toward its real time (`anchor_host_ns` is raised; the
// caller keeps it with EventAnchors::raise), and no GPU work is ever placed
// before the call that submitted it.
inline uint64_t anchored_time(uint64_t& anchor_host_ns, double since_anchor_ns, uint64_t submitted_ns) noexcept {
  const double earliest_anchor_ns = static_cast<double>(submitted_ns) - since_anchor_ns;
  if (earliest_anchor_ns > static_cast<double>(anchor_host_ns))
    anchor_host_ns = static_cast<uint64_t>(earliest_anchor_ns);
  const double at = static_cast<double>(anchor_host_ns) + since_anchor_ns;
  return at <= 0 ? 0 : static_cast<uint64_t>(std::llround(at));
}

}  // namespace proflaunch
