#include "tools/proftrace/stats/stack_joins.h"

namespace proflaunch::tools::stats {

using namespace format;

namespace {
constexpr size_t kJoinWindow = size_t{1} << 17;
}  // namespace

GpuTimeByStackJoin::GpuTimeByStackJoin()
    : join_([this](const StackKey& key, uint64_t gpu_ns) {
                paired_ = true;
                paired_key_ = key;
                paired_ns_ = gpu_ns;
                ++paired_count_;
              },
              [](const StackKey&) {}, kJoinWindow) {}

bool GpuTimeByStackJoin::on_record(const SectionModel& section, const RecordView& record, StackKey* key,
                                   uint64_t* gpu_ns) {
  paired_ = false;
  if (record.record_kind() == RecordKind::kCallStack) {
    const auto stack = record.as<CallStackRecord>();
    if (stack.point != static_cast<uint8_t>(StackPoint::kLaunch)) return false;
    ++stacks_added_;
    join_.add_operation(section.section_id, stack.correlation_id,
                        StackKey{section.section_id, stack.native_stack, stack.python_stack});
  } else if (record.record_kind() == RecordKind::kGpuActivity) {
    const auto activity = record.as<GpuActivityRecord>();
    join_.add_activity(section.section_id, activity.correlation_id, gpu_duration_ns(activity));
  }
  if (!paired_) return false;
  *key = paired_key_;
  *gpu_ns = paired_ns_;
  return true;
}

bool allocates_memory(const MemoryOperationRecord& record) {
  if (record.action != static_cast<uint8_t>(MemoryAction::kAcquire) || record.span.result != 0) return false;
  const auto kind = static_cast<AllocationKind>(record.kind);
  return kind != AllocationKind::kMapping && kind != AllocationKind::kAddressRange;
}

bool BytesAllocatedByStackJoin::on_record(const SectionModel& section, const RecordView& record, StackKey* key,
                                          uint64_t* bytes) {
  if (record.record_kind() == RecordKind::kMemoryOperation) {
    const auto operation = record.as<MemoryOperationRecord>();
    if (!allocates_memory(operation)) return false;
    if (operation.span.flags & kApiCaptured) return false;  // allocated when its graph runs
    if (operation.span.flags & kApiCarried) return false;   // allocated before the capture window
    const Correlation correlation{section.section_id, operation.span.correlation_id};
    bytes_[correlation] = operation.bytes;
    order_.push_back(correlation);
    while (order_.size() > kJoinWindow) {
      unmatched_ += bytes_.erase(order_.front());
      order_.pop_front();
    }
  } else if (record.record_kind() == RecordKind::kCallStack) {
    const auto stack = record.as<CallStackRecord>();
    if (stack.point != static_cast<uint8_t>(StackPoint::kMemory)) return false;
    // The stack follows its allocation on the same thread: it is known by now.
    auto it = bytes_.find(Correlation{section.section_id, stack.correlation_id});
    if (it == bytes_.end()) return false;
    *key = StackKey{section.section_id, stack.native_stack, stack.python_stack};
    *bytes = it->second;
    bytes_.erase(it);
    return true;
  }
  return false;
}

}  // namespace proflaunch::tools::stats
