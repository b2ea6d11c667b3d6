#include "tools/proftrace/stats/stack_joins.h"

namespace proflaunch::tools::stats {

using namespace format;

bool allocates_memory(const MemoryOperationRecord& record) {
  if (record.action != static_cast<uint8_t>(MemoryAction::kAcquire) || record.span.result != 0) return false;
  const auto kind = static_cast<AllocationKind>(record.kind);
  return kind != AllocationKind::kMapping && kind != AllocationKind::kAddressRange;
}

}  // namespace proflaunch::tools::stats
