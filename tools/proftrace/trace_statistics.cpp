#include "tools/proftrace/trace_statistics.h"

#include "formats/record_kinds.h"

namespace proflaunch::tools {

using namespace proflaunch::format;

uint64_t StatisticsCollector::count(uint16_t kind) const {
  if (kind < counts_.size()) return counts_[kind];
  auto found = other_kinds_.find(kind);
  return found == other_kinds_.end() ? 0 : found->second;
}

void StatisticsCollector::see_time(SectionStatistics& section, uint64_t ns) {
  if (ns == 0) return;  // unset
  if (ns < section.first_ns) section.first_ns = ns;
  if (ns > section.last_ns) section.last_ns = ns;
  if (ns < first_ns_) first_ns_ = ns;
  if (ns > last_ns_) last_ns_ = ns;
}

void StatisticsCollector::on_record(const RecordView& record) {
  if (record.kind < counts_.size()) ++counts_[record.kind];
  else ++other_kinds_[record.kind];
  if (is_definition_kind(record.kind)) return;

  if (last_section_ == nullptr || record.section_id != last_section_id_) {
    last_section_ = &sections_[record.section_id];
    last_section_id_ = record.section_id;
  }
  SectionStatistics& section = *last_section_;
  // A CallStack belongs to the event before it: not an event of its own.
  if (record.record_kind() != RecordKind::kThreadBatch && record.record_kind() != RecordKind::kCallStack)
    ++section.event_records;

  auto see_span = [&](const ApiSpan& span) {
    see_time(section, span.begin_ns);
    see_time(section, span.end_ns);
  };
  switch (record.record_kind()) {
    case RecordKind::kLost: {
      const auto lost = record.as<LostRecord>();
      if (lost.reason == static_cast<uint32_t>(LostReason::kOutsideCaptureWindow)) {
        section.outside_window_work += lost.count;  // not a loss
        break;
      }
      section.lost_records += lost.count;
      ++section.lost_record_count;
      section.lost_by_reason[lost.reason] += lost.count;
      if (lost.reason == static_cast<uint32_t>(LostReason::kCpuSampleUnsafe) ||
          lost.reason == static_cast<uint32_t>(LostReason::kCpuSampleBufferFull))
        section.cpu_samples_lost += lost.count;
      see_time(section, lost.first_ns);
      see_time(section, lost.last_ns);
      break;
    }
    case RecordKind::kCpuSample: {
      const auto sample = record.as<CpuSampleRecord>();
      ++section.cpu_samples;
      section.cpu_sample_periods += sample.periods;
      see_time(section, sample.time_ns);
      break;
    }
    case RecordKind::kCpuSamplingInfo: {
      const auto info = record.as<CpuSamplingInfoRecord>();
      section.has_cpu_sampling_info = true;
      section.cpu_sampling_hz = info.hz;
      section.cpu_sampling_state = info.state;
      section.cpu_sampling_signal = info.signal_number;
      break;
    }
    case RecordKind::kApiCall: see_span(record.as<ApiCallRecord>().span); break;
    case RecordKind::kKernelLaunch: see_span(record.as<KernelLaunchRecord>().span); break;
    case RecordKind::kMemoryCopy: see_span(record.as<MemoryCopyRecord>().span); break;
    case RecordKind::kMemorySet: see_span(record.as<MemorySetRecord>().span); break;
    case RecordKind::kSynchronize: see_span(record.as<SynchronizeRecord>().span); break;
    case RecordKind::kObjectLifecycle: see_span(record.as<ObjectLifecycleRecord>().span); break;
    case RecordKind::kCollectiveComm: see_span(record.as<CollectiveCommRecord>().span); break;
    case RecordKind::kCollective: see_span(record.as<CollectiveRecord>().span); break;
    case RecordKind::kCollectiveGroup: see_span(record.as<CollectiveGroupRecord>().span); break;
    case RecordKind::kMemoryOperation: see_span(record.as<MemoryOperationRecord>().span); break;
    case RecordKind::kMemoryInfo: see_span(record.as<MemoryInfoRecord>().span); break;
    case RecordKind::kBlockingCall: see_span(record.as<BlockingCallRecord>().span); break;
    case RecordKind::kApiCount: {
      const auto counted = record.as<ApiCountRecord>();
      section.counted_calls += counted.count;
      see_time(section, counted.first_ns);
      see_time(section, counted.last_ns);
      break;
    }
    case RecordKind::kGpuActivity: {
      const auto activity = record.as<GpuActivityRecord>();
      see_time(section, activity.start_ns);
      see_time(section, activity.end_ns);
      break;
    }
    default: break;
  }
}

}  // namespace proflaunch::tools
