#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::tools::memory {

using namespace proflaunch::format;

std::optional<MemoryEvent> decode_memory_event(const RecordView& record) {
  MemoryEvent event;
  event.section_id = record.section_id;
  event.tid = record.tid;
  ApiSpan span{};
  if (record.record_kind() == RecordKind::kMemoryOperation) {
    const auto r = record.as<MemoryOperationRecord>();
    // Captured into a graph: nothing was allocated or freed by this call.
    if (r.span.flags & kApiCaptured) return std::nullopt;
    span = r.span;
    event.device = r.device;
    event.address = r.address;
    event.bytes = r.bytes;
    event.stream = r.stream;
    event.handle = r.handle;
    event.pool_reserved_bytes = r.pool_reserved_bytes;
    event.flags = r.flags;
    event.kind = static_cast<AllocationKind>(r.kind);
    event.action = static_cast<MemoryAction>(r.action);
  } else if (record.record_kind() == RecordKind::kMemoryInfo) {
    const auto r = record.as<MemoryInfoRecord>();
    span = r.span;
    event.device = r.device;
    event.free_bytes = r.free_bytes;
    event.total_bytes = r.total_bytes;
    event.is_info = true;
  } else {
    return std::nullopt;
  }
  event.time_ns = span.end_ns;
  event.begin_ns = span.begin_ns;
  event.correlation_id = span.correlation_id;
  event.result = span.result;
  event.api = span.api;
  return event;
}

}  // namespace proflaunch::tools::memory
