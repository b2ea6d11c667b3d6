#include "tools/proftrace/memory/analysis_passes.h"

#include "tools/proftrace/interpret/interpreter.h"

#include <algorithm>
#include <cstring>

namespace proflaunch::tools::memory {

using format::AllocationKind;

namespace {

// The memory events of the pass, put into time order and applied to the state.
class MemoryEventFeeder : public MemoryEventFeed {
 public:
  MemoryEventFeeder(TimeOrderBuffer& order, MemoryState& state) : order_(order), state_(state) {}

 private:
  void memory_event(const MemoryEvent& event) override {
    order_.push(event, [this](const MemoryEvent& ready) { state_.apply(ready); });
  }

  TimeOrderBuffer& order_;
  MemoryState& state_;
};

// Largest first, at most `limit`.
std::vector<Allocation> largest(std::vector<Allocation> all, size_t limit) {
  const size_t kept = std::min(limit, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kept), all.end(),
                    [](const Allocation& a, const Allocation& b) {
                      return a.bytes != b.bytes ? a.bytes > b.bytes : a.time_ns < b.time_ns;
                    });
  all.resize(kept);
  return all;
}

void raise(PeakAt& peak, uint64_t bytes, uint64_t time_ns, uint64_t event_index) {
  if (bytes <= peak.peak.bytes) return;
  peak.peak = Peak{bytes, time_ns};
  peak.event_index = event_index;
}

}  // namespace

std::string AllocationNamer::api(uint64_t section_id, uint16_t api) const {
  const SectionModel* section = model_.find(section_id);
  return section != nullptr ? section->api_name(api) : "api#" + std::to_string(api);
}

std::string AllocationNamer::thread(uint64_t section_id, uint32_t tid) const {
  const SectionModel* section = model_.find(section_id);
  return section != nullptr ? std::string(section->thread_name(tid)) : std::string();
}

AllocationView AllocationNamer::view(const Allocation& a) const {
  AllocationView view;
  view.space = SpaceKey{a.section_id, a.device};
  view.address = a.address;
  view.bytes = a.bytes;
  view.time_ns = a.time_ns;
  view.end_ns = a.end_ns;
  view.correlation_id = a.correlation_id;
  view.native_stack = a.native_stack;
  view.python_stack = a.python_stack;
  view.kind = a.kind;
  view.api = api(a.section_id, a.api);
  view.tid = a.tid;
  view.thread = thread(a.section_id, a.tid);
  return view;
}

uint64_t replay_events(std::vector<InputTrace>& inputs, const TraceModel& model, MemoryState& state,
                       const TimeOrderBuffer::Options& order, uint64_t* lost_records) {
  TimeOrderBuffer buffer(order);
  MemoryEventFeeder feeder(buffer, state);
  interpret::Interpreter(model, {&feeder}).run(inputs);
  *lost_records += feeder.lost_records();
  buffer.finish([&](const MemoryEvent& ready) { state.apply(ready); });
  return buffer.late_events();
}

// ---- Pass 1

void FirstPass::on_event(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) {
  const uint64_t index = event_index_++;
  SpaceFacts& facts = spaces_[space];
  facts.first_ns = std::min(facts.first_ns, event.time_ns);
  facts.last_ns = std::max(facts.last_ns, event.time_ns);
  ++facts.events;
  if (event.is_info && event.succeeded() && memory_info_.size() < MemoryReport::kMaxListed)
    memory_info_.push_back(MemoryInfoSample{space, event.time_ns, event.free_bytes, event.total_bytes});
  raise(facts.allocated, totals.allocated(), event.time_ns, index);
  raise(facts.reserved, totals.reserved(), event.time_ns, index);
  raise(facts.managed, totals.managed_bytes, event.time_ns, index);
  raise(facts.pinned, totals.pinned(), event.time_ns, index);
  facts.at_end = totals;
}

void FirstPass::on_failure(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) {
  ++spaces_[space].failures;
  FailureReport failure;
  failure.space = space;
  failure.time_ns = event.time_ns;
  failure.kind = event.kind;
  failure.result = event.result;
  failure.requested_bytes = event.bytes;
  failure.tid = event.tid;
  failure.correlation_id = event.correlation_id;
  failure.totals = totals;
  failure.api = namer_.api(event.section_id, event.api);
  failure.thread = namer_.thread(event.section_id, event.tid);
  failure.detailed = failures_.size() < MemoryReport::kDetailedFailures;
  if (failure.detailed && state_ != nullptr) {
    std::vector<Allocation> live;
    state_->for_each_live(space, [&](const Allocation& a) {
      if (a.kind != AllocationKind::kManaged || space.device == kHostSpace) live.push_back(a);
    });
    for (const Allocation& a : largest(std::move(live), MemoryReport::kLargestAtFailure))
      failure.largest.push_back(namer_.view(a));
  }
  failures_.push_back(std::move(failure));
}

void FirstPass::on_allocation(const Allocation& allocation) {
  ++spaces_[SpaceKey{allocation.section_id, allocation.device}].allocations;
}

void FirstPass::on_free(const Allocation& allocation) {
  ++spaces_[SpaceKey{allocation.section_id, allocation.device}].frees;
  offer_interval(allocation);
}

void FirstPass::offer_interval(const Allocation& allocation) {
  if (intervals_.size() < MemoryReport::kMaxIntervals) {
    intervals_.push(allocation);
  } else if (allocation.bytes > intervals_.top().bytes) {
    intervals_.pop();
    intervals_.push(allocation);
  }
}

void FirstPass::finish() {
  if (state_ == nullptr) return;
  for (const auto& [space, facts] : spaces_)
    state_->for_each_live(space, [&](const Allocation& a) { offer_interval(a); });
}

std::vector<Allocation> FirstPass::largest_intervals() {
  std::vector<Allocation> all;
  while (!intervals_.empty()) {
    all.push_back(intervals_.top());
    intervals_.pop();
  }
  std::reverse(all.begin(), all.end());
  return all;
}

// ---- Pass 2

SecondPass::SecondPass(const std::map<SpaceKey, SpaceFacts>& facts, size_t timeline_buckets) : facts_(facts) {
  for (const auto& [space, f] : facts) {
    Sampler& sampler = samplers_[space];
    sampler.first_ns = f.first_ns;
    sampler.host = space.device == kHostSpace;
    if (f.events > 2 * timeline_buckets && timeline_buckets > 0 && f.last_ns > f.first_ns)
      sampler.bucket_ns = (f.last_ns - f.first_ns) / timeline_buckets + 1;
    SpaceResult& result = results_[space];
    const uint64_t span = f.last_ns > f.first_ns ? f.last_ns - f.first_ns : 0;
    result.churn.window_begin_ns = f.first_ns + span / 10;
    result.churn.window_end_ns = f.last_ns - span / 10;
  }
}

void SecondPass::on_event(const MemoryEvent& event, const SpaceKey& space, const SpaceTotals& totals) {
  const uint64_t index = event_index_++;
  auto facts = facts_.find(space);
  if (facts == facts_.end()) return;  // cannot happen: the same events as pass 1
  SpaceResult& result = results_[space];
  const PeakAt& peak = space.device == kHostSpace ? facts->second.pinned : facts->second.allocated;
  if (index == peak.event_index) snapshot_live(space, result);
  sample(samplers_[space], result, event.time_ns, totals);
}

bool SecondPass::in_churn_window(const SpaceKey& space, uint64_t time_ns, SpaceResult** result) {
  auto found = results_.find(space);
  if (found == results_.end()) return false;
  const Churn& churn = found->second.churn;
  *result = &found->second;
  return time_ns >= churn.window_begin_ns && time_ns <= churn.window_end_ns;
}

void SecondPass::on_allocation(const Allocation& allocation) {
  SpaceResult* result = nullptr;
  if (!in_churn_window(SpaceKey{allocation.section_id, allocation.device}, allocation.time_ns, &result)) return;
  ++result->churn.allocations;
  result->churn.allocated_bytes += allocation.bytes;
}

void SecondPass::on_free(const Allocation& allocation) {
  SpaceResult* result = nullptr;
  if (in_churn_window(SpaceKey{allocation.section_id, allocation.device}, allocation.end_ns, &result))
    ++result->churn.frees;
}

void SecondPass::snapshot_live(const SpaceKey& space, SpaceResult& result) {
  if (state_ == nullptr) return;
  std::vector<Allocation> live;
  state_->for_each_live(space, [&](const Allocation& a) {
    if (space.device == kHostSpace || a.kind != AllocationKind::kManaged) live.push_back(a);
  });
  result.live_at_peak_count = live.size();
  uint64_t total = 0;
  for (const Allocation& a : live) total += a.bytes;
  result.live_at_peak = largest(std::move(live), MemoryReport::kMaxListed);
  uint64_t listed = 0;
  for (const Allocation& a : result.live_at_peak) listed += a.bytes;
  result.live_at_peak_unlisted_bytes = total - listed;
}

void SecondPass::sample(Sampler& sampler, SpaceResult& result, uint64_t time_ns, const SpaceTotals& totals) {
  const Sample point{time_ns, totals};
  if (sampler.bucket_ns == 0) {
    // Every change, and one point per timestamp (the last state at it).
    if (!result.timeline.empty() && result.timeline.back().time_ns == time_ns) {
      result.timeline.back() = point;
      return;
    }
    if (!result.timeline.empty() && std::memcmp(&result.timeline.back().totals, &totals, sizeof totals) == 0) return;
    result.timeline.push_back(point);
    return;
  }
  const uint64_t bucket = (time_ns - std::min(time_ns, sampler.first_ns)) / sampler.bucket_ns;
  if (bucket != sampler.bucket) {
    flush_bucket(sampler, result);
    sampler.bucket = bucket;
    sampler.has_max = false;
  }
  const uint64_t value = sampler.host ? totals.pinned() : totals.allocated();
  const uint64_t best = sampler.host ? sampler.max.totals.pinned() : sampler.max.totals.allocated();
  if (!sampler.has_max || value > best) {
    sampler.max = point;
    sampler.has_max = true;
  }
  sampler.last = point;
}

void SecondPass::flush_bucket(Sampler& sampler, SpaceResult& result) {
  if (!sampler.has_max) return;
  result.timeline.push_back(sampler.max);
  if (sampler.last.time_ns != sampler.max.time_ns) result.timeline.push_back(sampler.last);
}

void SecondPass::finish() {
  for (auto& [space, sampler] : samplers_) flush_bucket(sampler, results_[space]);
}

}  // namespace proflaunch::tools::memory
