#include "tools/proftrace/stats/collective_analysis.h"

#include <algorithm>
#include <set>

#include "tools/proftrace/interpret/clock_alignment.h"

namespace proflaunch::tools::stats {

using namespace proflaunch::format;

namespace {

// Sorted, disjoint.
std::vector<std::pair<int64_t, int64_t>> merged(std::vector<std::pair<int64_t, int64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<std::pair<int64_t, int64_t>> result;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!result.empty() && start <= result.back().second)
      result.back().second = std::max(result.back().second, end);
    else
      result.emplace_back(start, end);
  }
  return result;
}

uint64_t operation_size(uint8_t op, uint64_t bytes, int32_t nranks) {
  switch (static_cast<CollectiveOp>(op)) {
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAlltoAll:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return bytes * static_cast<uint64_t>(nranks > 0 ? nranks : 1);
    default: return bytes;
  }
}

}  // namespace

int64_t union_length_ns(std::vector<std::pair<int64_t, int64_t>>& intervals) {
  int64_t total = 0;
  for (const auto& [start, end] : merged(intervals)) total += end - start;
  return total;
}

int64_t overlap_length_ns(std::vector<std::pair<int64_t, int64_t>>& a, std::vector<std::pair<int64_t, int64_t>>& b) {
  const auto x = merged(a), y = merged(b);
  int64_t total = 0;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const int64_t start = std::max(x[i].first, y[j].first);
    const int64_t end = std::min(x[i].second, y[j].second);
    if (end > start) total += end - start;
    (x[i].second < y[j].second) ? ++i : ++j;
  }
  return total;
}

int64_t CollectiveInstance::last_arrival_ns() const {
  int64_t last = INT64_MIN;
  for (const auto& a : arrivals) last = std::max(last, a.start_ns);
  return last;
}

int64_t CollectiveInstance::own_time_ns() const {
  const CollectiveArrival* last = nullptr;
  for (const auto& a : arrivals)
    if (last == nullptr || a.start_ns > last->start_ns) last = &a;
  return last != nullptr ? last->end_ns - last->start_ns : 0;
}

int32_t CollectiveInstance::straggler() const {
  const CollectiveArrival* last = nullptr;
  for (const auto& a : arrivals)
    if (last == nullptr || a.start_ns > last->start_ns) last = &a;
  return last != nullptr ? last->rank : -1;
}

void CollectiveAnalysis::on_collective(const interpret::Event<CollectiveRecord>& e) {
  const CollectiveRecord& r = e.record;
  if (r.span.result != 0 || r.sequence == 0) return;  // rejected by NCCL: nothing ran
  calls_.push_back(Call{e.section->id, r.span.correlation_id, r.group_id, r.stream, r.op, r.comm_id, r.sequence,
                        r.bytes, r.rank, r.nranks, r.root});
  if (r.group_id == 0) claim({e.section->id, r.span.correlation_id});
}

void CollectiveAnalysis::on_collective_group(const interpret::Event<CollectiveGroupRecord>& e) {
  groups_[{e.section->id, e.record.group_id, e.record.stream}] = e.record.span.correlation_id;
  claim({e.section->id, e.record.span.correlation_id});
}

void CollectiveAnalysis::on_gpu_work_read(const interpret::GpuWork& work) {
  const GpuActivityRecord& a = work.activity;
  if (a.kind != static_cast<uint8_t>(GpuActivityKind::kKernel)) return;
  const Key key{work.section->id, a.correlation_id};
  const Interval interval{static_cast<int64_t>(a.start_ns), static_cast<int64_t>(a.end_ns)};
  if (awaited_.erase(key) != 0) {
    collective_kernels_[key] = interval;
    add_interval(key.first, interval, /*communication=*/true);
    return;
  }
  if (collective_kernels_.count(key) != 0 || !recent_.emplace(key, interval).second) return;  // seen already
  recent_order_.push_back(key);
  while (recent_order_.size() > window_) {
    const Key oldest = recent_order_.front();
    recent_order_.pop_front();
    auto it = recent_.find(oldest);
    if (it == recent_.end()) continue;  // claimed meanwhile
    add_interval(oldest.first, it->second, /*communication=*/false);
    recent_.erase(it);
  }
}

// A collective (or group) names the kernel it launched: taken out of the
// window, or awaited when its interval has not come yet.
void CollectiveAnalysis::claim(const Key& kernel) {
  if (collective_kernels_.count(kernel) != 0) return;
  auto it = recent_.find(kernel);
  if (it == recent_.end()) {
    awaited_.insert(kernel);
    return;
  }
  collective_kernels_[kernel] = it->second;
  add_interval(kernel.first, it->second, /*communication=*/true);
  recent_.erase(it);
}

void CollectiveAnalysis::add_interval(uint64_t section, Interval interval, bool communication) {
  SectionTimes& times = times_[section];
  const int64_t start = std::max(interval.start_ns, times.sealed_until);
  if (interval.end_ns <= start) return;  // entirely before the seal
  (communication ? times.communication : times.compute).emplace_back(start, interval.end_ns);
  if (times.compute.size() + times.communication.size() < seal_at_) return;
  std::vector<int64_t> starts;
  starts.reserve(times.compute.size() + times.communication.size());
  for (const auto& list : {&times.compute, &times.communication})
    for (const auto& [s, e] : *list) starts.push_back(s);
  std::nth_element(starts.begin(), starts.begin() + static_cast<ptrdiff_t>(starts.size() / 2), starts.end());
  seal(times, starts[starts.size() / 2]);
}

// Unions and intersects what lies before `until`; what reaches past it stays.
void CollectiveAnalysis::seal(SectionTimes& times, int64_t until) {
  std::vector<std::pair<int64_t, int64_t>> before[2];
  std::vector<std::pair<int64_t, int64_t>>* lists[2] = {&times.compute, &times.communication};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::pair<int64_t, int64_t>> kept;
    for (const auto& [start, end] : *lists[i]) {
      if (start < until) before[i].emplace_back(start, std::min(end, until));
      if (end > until) kept.emplace_back(std::max(start, until), end);
    }
    lists[i]->swap(kept);
  }
  times.compute_ns += union_length_ns(before[0]);
  times.communication_ns += union_length_ns(before[1]);
  times.overlap_ns += overlap_length_ns(before[0], before[1]);
  times.sealed_until = until;
}

void CollectiveAnalysis::finish(const TraceModel& model) {
  // Clocks: per-host offsets, refined by the collectives themselves.
  HostClockOffsets offsets = HostClockOffsets::from_snapshots(model);
  std::map<uint64_t, std::string> host_of;
  std::map<uint64_t, int32_t> process_rank;
  for (const auto& [id, section] : model.sections()) {
    host_of[id] = section.host();
    process_rank[id] = section.process ? section.process->rank : -1;
  }
  // A process started without RANK (a job that forks its ranks) is the rank
  // its communicators give it, when they all agree.
  std::map<uint64_t, std::set<int32_t>> comm_ranks;
  for (const Call& call : calls_)
    if (call.rank >= 0) comm_ranks[call.section].insert(call.rank);
  for (auto& [id, rank] : process_rank)
    if (rank < 0 && comm_ranks[id].size() == 1) rank = *comm_ranks[id].begin();
  struct Resolved {
    const Call* call;
    Interval gpu;  // local clock
  };
  std::vector<Resolved> resolved;
  for (const Call& call : calls_) {
    uint64_t correlation = call.correlation;
    if (call.group_id != 0) {
      auto group = groups_.find({call.section, call.group_id, call.stream});
      if (group == groups_.end()) {
        ++calls_without_gpu_time_;
        continue;
      }
      correlation = group->second;
    }
    auto kernel = collective_kernels_.find({call.section, correlation});
    if (kernel == collective_kernels_.end()) {
      ++calls_without_gpu_time_;
      continue;
    }
    resolved.push_back(Resolved{&call, kernel->second});
  }
  if (offsets.host_count() > 1) {
    std::vector<CollectiveEndSample> samples;
    for (const Resolved& r : resolved)
      if (r.call->group_id == 0 && ends_together(r.call->op))
        samples.push_back({host_of[r.call->section], r.call->comm_id, r.call->sequence, r.gpu.end_ns});
    offsets.refine_with_collective_ends(samples);
  }

  // Instances: collectives by (comm, sequence); a send and its receive by
  // (comm, source, destination, sequence).
  std::map<std::tuple<uint64_t, int32_t, int32_t, uint64_t>, size_t> index;
  for (const Resolved& r : resolved) {
    const Call& call = *r.call;
    const int64_t offset = offsets.offset_ns(host_of[call.section]);
    const int32_t rank = process_rank[call.section] >= 0 ? process_rank[call.section] : call.rank;
    const auto op = static_cast<CollectiveOp>(call.op);
    int32_t source = -1, destination = -1;
    if (op == CollectiveOp::kSend) source = call.rank, destination = call.root;
    if (op == CollectiveOp::kRecv) source = call.root, destination = call.rank;
    const auto key = std::make_tuple(call.comm_id, source, destination, call.sequence);
    auto [it, inserted] = index.emplace(key, instances_.size());
    if (inserted)
      instances_.push_back(CollectiveInstance{op == CollectiveOp::kRecv ? static_cast<uint8_t>(CollectiveOp::kSend) : call.op,
                                              operation_size(call.op, call.bytes, call.nranks), call.nranks, {}});
    instances_[it->second].arrivals.push_back({rank, r.gpu.start_ns + offset, r.gpu.end_ns + offset});
    ranks_[rank].collectives++;
  }
  for (const CollectiveInstance& instance : instances_) {
    if (instance.arrivals.size() < 2) continue;
    const int64_t last = instance.last_arrival_ns();
    const int32_t straggler = instance.straggler();
    int64_t caused = 0;
    for (const auto& a : instance.arrivals) {
      ranks_[a.rank].wait_ns += last - a.start_ns;
      caused += last - a.start_ns;
    }
    ranks_[straggler].arrived_last++;
    ranks_[straggler].caused_wait_ns += caused;
  }
  // The kernels still in the window were launched by no collective: compute.
  for (const Key& key : recent_order_) {
    auto it = recent_.find(key);
    if (it == recent_.end()) continue;
    add_interval(key.first, it->second, /*communication=*/false);
    recent_.erase(it);
  }
  recent_order_.clear();
  // Per rank, the sum of its sections' times (ranks without collectives
  // still show their compute).
  for (auto& [id, times] : times_) {
    seal(times, INT64_MAX);
    const int32_t rank = process_rank[id];
    if (ranks_.count(rank) == 0 && times.compute_ns == 0) continue;
    RankTimes& rank_times = ranks_[rank];
    rank_times.compute_ns += times.compute_ns;
    rank_times.communication_ns += times.communication_ns;
    rank_times.overlap_ns += times.overlap_ns;
  }
}

}  // namespace proflaunch::tools::stats
