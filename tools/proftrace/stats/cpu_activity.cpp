#include "tools/proftrace/stats/cpu_activity.h"

#include <algorithm>

namespace proflaunch::tools::stats {

using namespace format;

void CpuActivity::on_cpu_sample(const interpret::CpuSampleEvent& e) {
  samples_.push_back(Sample{e.section->id, e.record.time_ns, e.tid, e.record.native_stack, e.record.python_stack,
                            std::max<uint32_t>(1, e.record.periods)});
}

void CpuActivity::on_blocking_call(const interpret::BlockingCallEvent& e) {
  const BlockingCallRecord& r = e.record;
  waits_.push_back(Wait{e.section->id, r.span.begin_ns, std::max(r.span.begin_ns, r.span.end_ns), r.object, e.tid,
                        e.stacks.native, e.stacks.python, r.span.api, r.object_kind});
}

void CpuActivity::on_cpu_sampling_info(const interpret::Event<CpuSamplingInfoRecord>& e) {
  Sampling& s = sampling_[e.section->id];
  s.last = e.record;
  s.seen = true;
  if (e.record.state == static_cast<uint8_t>(CpuSamplingState::kSteppedBack)) s.stepped_back = true;
  if (e.record.state == static_cast<uint8_t>(CpuSamplingState::kUnavailable)) s.unavailable = true;
}

void CpuActivity::on_lost(const interpret::Event<LostRecord>& e) {
  if (e.record.reason == static_cast<uint32_t>(LostReason::kCpuSampleUnsafe))
    sampling_[e.section->id].lost_unsafe += e.record.count;
  else if (e.record.reason == static_cast<uint32_t>(LostReason::kCpuSampleBufferFull))
    sampling_[e.section->id].lost_buffer_full += e.record.count;
}

void CpuActivity::on_operation_read(const interpret::Operation& op) {
  int32_t device = 0;
  switch (op.kind) {
    case interpret::OperationKind::kKernel: device = op.launch.device; break;
    case interpret::OperationKind::kCopy: device = op.copy.device; break;
    case interpret::OperationKind::kMemset: device = op.set.device; break;
    case interpret::OperationKind::kGraphLaunch: device = op.graph_launch.device; break;
  }
  ++launches_[{op.section->id, op.tid}];
  if (device < 0) return;
  thread_devices_[{op.section->id, op.tid}].insert(device);
  section_devices_[op.section->id].insert(device);
}

uint64_t CpuActivity::period_ns(uint64_t section) const {
  auto found = sampling_.find(section);
  if (found == sampling_.end() || found->second.last.hz == 0) return 1'000'000;
  return 1'000'000'000ull / found->second.last.hz;
}

std::set<int32_t> CpuActivity::devices(const ThreadKey& thread) const {
  if (auto found = thread_devices_.find(thread); found != thread_devices_.end()) return found->second;
  if (auto found = section_devices_.find(thread.first); found != section_devices_.end()) return found->second;
  return {};
}

uint32_t CpuActivity::launching_thread(uint64_t section) const {
  uint32_t best = 0;
  uint64_t most = 0;
  for (const auto& [key, count] : launches_)
    if (key.first == section && count > most) best = key.second, most = count;
  return best;
}

namespace {

Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint64_t begin = std::max(a[i].first, b[j].first), end = std::min(a[i].second, b[j].second);
    if (begin < end) out.emplace_back(begin, end);
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return out;
}

}  // namespace

uint64_t overlap_ns(const Intervals& intervals, uint64_t begin_ns, uint64_t end_ns) {
  uint64_t total = 0;
  auto it = std::upper_bound(intervals.begin(), intervals.end(), begin_ns,
                             [](uint64_t t, const std::pair<uint64_t, uint64_t>& i) { return t < i.second; });
  for (; it != intervals.end() && it->first < end_ns; ++it) {
    const uint64_t b = std::max(it->first, begin_ns), e = std::min(it->second, end_ns);
    if (e > b) total += e - b;
  }
  return total;
}

IdleTimes::IdleTimes(const GpuIdleGaps& gaps, const CpuActivity& activity) : activity_(activity) {
  for (const IdleGap& gap : gaps.gaps()) by_device_[{gap.section, gap.device}].emplace_back(gap.begin_ns, gap.end_ns);
  for (auto& [device, intervals] : by_device_) std::sort(intervals.begin(), intervals.end());
}

const Intervals& IdleTimes::of(const CpuActivity::ThreadKey& thread) {
  auto found = by_thread_.find(thread);
  if (found != by_thread_.end()) return found->second;
  Intervals idle;
  bool first = true;
  for (int32_t device : activity_.devices(thread)) {
    auto d = by_device_.find({thread.first, device});
    const Intervals none;
    const Intervals& gaps = d != by_device_.end() ? d->second : none;
    idle = first ? gaps : intersect(idle, gaps);
    first = false;
  }
  return by_thread_.emplace(thread, std::move(idle)).first->second;
}

bool IdleTimes::contains(const CpuActivity::ThreadKey& thread, uint64_t ns) {
  return overlap_ns(of(thread), ns, ns + 1) > 0;
}

uint64_t IdleTimes::overlap(const CpuActivity::ThreadKey& thread, uint64_t begin_ns, uint64_t end_ns) {
  return overlap_ns(of(thread), begin_ns, end_ns);
}

}  // namespace proflaunch::tools::stats
