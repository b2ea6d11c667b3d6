#include "tools/proftrace/interpret/clock_alignment.h"

#include <algorithm>
#include <tuple>

namespace proflaunch::tools {

using namespace proflaunch::format;

bool ends_together(uint8_t op) {
  switch (static_cast<CollectiveOp>(op)) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAlltoAll: return true;
    default: return false;
  }
}

HostClockOffsets HostClockOffsets::from_snapshots(const TraceModel& model) {
  HostClockOffsets result;
  // Each host's wall-clock offset, from its first section (processes of one
  // host agree to the microsecond: the snapshot is taken back to back).
  std::map<std::string, int64_t> wall_minus_monotonic;
  for (const SectionModel* section : model.ordered()) {
    if (!section->process) continue;
    const std::string host = section->host();
    const int64_t offset = static_cast<int64_t>(section->process->realtime_ns - section->process->monotonic_ns);
    if (wall_minus_monotonic.emplace(host, offset).second && result.reference_.empty() && result.offsets_.empty())
      result.reference_ = host;
  }
  const auto reference = wall_minus_monotonic.find(result.reference_);
  // Modulo 2^64: a damaged snapshot must not make the subtraction overflow
  // (undefined behaviour for int64_t); its offset is then simply wrong.
  for (const auto& [host, offset] : wall_minus_monotonic)
    result.offsets_[host] =
        reference == wall_minus_monotonic.end()
            ? 0
            : static_cast<int64_t>(static_cast<uint64_t>(offset) - static_cast<uint64_t>(reference->second));
  return result;
}

void HostClockOffsets::refine_with_collective_ends(const std::vector<CollectiveEndSample>& samples) {
  // The reference host's end per instance (the earliest, if several ranks).
  std::map<std::pair<uint64_t, uint64_t>, int64_t> reference_ends;
  for (const auto& s : samples) {
    if (s.host != reference_) continue;
    auto [it, inserted] = reference_ends.emplace(std::make_pair(s.comm_id, s.sequence), s.end_ns);
    if (!inserted) it->second = std::min(it->second, s.end_ns);
  }
  std::map<std::string, std::vector<int64_t>> disagreements;
  for (const auto& s : samples) {
    if (s.host == reference_) continue;
    auto found = reference_ends.find({s.comm_id, s.sequence});
    if (found == reference_ends.end()) continue;
    disagreements[s.host].push_back(found->second - (s.end_ns + offset_ns(s.host)));
  }
  for (auto& [host, values] : disagreements) {
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    offsets_[host] += values[values.size() / 2];
    samples_[host] = values.size();
  }
}

int64_t HostClockOffsets::offset_ns(const std::string& host) const {
  auto found = offsets_.find(host);
  return found != offsets_.end() ? found->second : 0;
}

size_t HostClockOffsets::refinement_samples(const std::string& host) const {
  auto found = samples_.find(host);
  return found != samples_.end() ? found->second : 0;
}

void CollectiveEndCollector::on_record(const RecordView& record) {
  const SectionModel* section = model_.find(record.section_id);
  if (section == nullptr) return;
  if (record.record_kind() == RecordKind::kCollective) {
    const auto r = record.as<CollectiveRecord>();
    if (r.group_id != 0 || r.sequence == 0 || r.span.result != 0 || !ends_together(r.op)) return;
    const Key key{record.section_id, r.span.correlation_id};
    if (auto end = ends_.find(key); end != ends_.end()) {
      samples_.push_back({section->host(), r.comm_id, r.sequence, end->second});
      ends_.erase(end);
      return;
    }
    collectives_[key] = Instance{r.comm_id, r.sequence};
    order_.push_back(key);
  } else if (record.record_kind() == RecordKind::kGpuActivity) {
    const auto a = record.as<GpuActivityRecord>();
    if (a.kind != static_cast<uint8_t>(GpuActivityKind::kKernel)) return;
    const Key key{record.section_id, a.correlation_id};
    if (auto collective = collectives_.find(key); collective != collectives_.end()) {
      samples_.push_back({section->host(), collective->second.comm_id, collective->second.sequence,
                          static_cast<int64_t>(a.end_ns)});
      collectives_.erase(collective);
      return;
    }
    ends_[key] = static_cast<int64_t>(a.end_ns);
    order_.push_back(key);
  } else {
    return;
  }
  trim();
}

void CollectiveEndCollector::trim() {
  if (order_.size() <= 2 * window_) return;
  // Drop the older half's leftovers (kernels that were not collectives).
  const size_t drop = order_.size() - window_;
  for (size_t i = 0; i < drop; ++i) {
    collectives_.erase(order_[i]);
    ends_.erase(order_[i]);
  }
  order_.erase(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(drop));
}

HostClockOffsets align_host_clocks(std::vector<InputTrace>& inputs, const TraceModel& model) {
  HostClockOffsets offsets = HostClockOffsets::from_snapshots(model);
  if (offsets.host_count() > 1) {
    CollectiveEndCollector collector(model);
    for (auto& input : inputs) input.reader->read(collector, format::ChunkSelection::kEventsOnly);
    offsets.refine_with_collective_ends(collector.samples());
  }
  return offsets;
}

}  // namespace proflaunch::tools
