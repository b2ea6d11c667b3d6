// One memory record (MemoryOperation or MemoryInfo) as the memory model
// reads it: the fields it needs, unpacked, with its section and thread.
#pragma once

#include <cstdint>
#include <optional>

#include "formats/reader.h"
#include "formats/records.h"

namespace proflaunch::tools::memory {

struct MemoryEvent {
  uint64_t section_id = 0;
  uint64_t time_ns = 0;   // when the call returned: its effect is complete
  uint64_t begin_ns = 0;
  uint64_t correlation_id = 0;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t handle = 0;
  uint64_t pool_reserved_bytes = format::kPoolReservedUnknown;
  uint64_t free_bytes = 0;   // MemoryInfo
  uint64_t total_bytes = 0;  // MemoryInfo
  uint64_t arrival = 0;      // position in the pass: orders events with equal times
  int32_t device = -1;
  int32_t result = 0;
  uint32_t tid = 0;
  uint32_t flags = 0;
  uint16_t api = 0;
  format::AllocationKind kind = format::AllocationKind::kDevice;
  format::MemoryAction action = format::MemoryAction::kAcquire;
  bool is_info = false;  // a MemoryInfo record (cuMemGetInfo)

  bool succeeded() const { return result == 0; }
};

// The event of a memory record, or nullopt for any other record kind.
std::optional<MemoryEvent> decode_memory_event(const format::RecordView& record);

}  // namespace proflaunch::tools::memory
