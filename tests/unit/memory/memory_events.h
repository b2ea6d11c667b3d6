// Hand-built memory events and records for the memory model's tests: what
// the shim would record for each call, with times and sizes chosen by the
// test so that the expected totals follow from the scenario alone.
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "tools/proftrace/memory/memory_event.h"

namespace proflaunch::testing {

using format::AllocationKind;
using format::MemoryAction;

constexpr uint64_t kSection = 0x5EC;
constexpr uint64_t kMiB = 1ull << 20;

// A MemoryOperation record as the shim writes it.
inline format::MemoryOperationRecord memory_record(AllocationKind kind, MemoryAction action, uint64_t time_ns,
                                                   uint64_t address, uint64_t bytes, int32_t device = 0,
                                                   int32_t result = 0) {
  format::MemoryOperationRecord r{};
  r.device = device;
  r.span.begin_ns = time_ns - 100;
  r.span.end_ns = time_ns;
  r.span.correlation_id = time_ns;  // unique per call in these scenarios
  r.span.result = result;
  r.span.api = 1;
  r.address = address;
  r.bytes = bytes;
  r.pool_reserved_bytes = kind == AllocationKind::kPool ? format::kPoolReservedUnknown : 0;
  r.kind = static_cast<uint8_t>(kind);
  r.action = static_cast<uint8_t>(action);
  return r;
}

// The same call as the memory model's input.
inline tools::memory::MemoryEvent memory_event(AllocationKind kind, MemoryAction action, uint64_t time_ns,
                                               uint64_t address, uint64_t bytes, int32_t device = 0,
                                               int32_t result = 0) {
  tools::memory::MemoryEvent e;
  e.section_id = kSection;
  e.time_ns = time_ns;
  e.begin_ns = time_ns - 100;
  e.correlation_id = time_ns;
  e.address = address;
  e.bytes = bytes;
  e.device = device;
  e.result = result;
  e.tid = 7;
  e.api = 1;
  e.kind = kind;
  e.action = action;
  return e;
}

inline tools::memory::MemoryEvent alloc(uint64_t t, uint64_t address, uint64_t bytes, int32_t device = 0) {
  return memory_event(AllocationKind::kDevice, MemoryAction::kAcquire, t, address, bytes, device);
}
inline tools::memory::MemoryEvent free_of(uint64_t t, uint64_t address, int32_t device = 0) {
  return memory_event(AllocationKind::kDevice, MemoryAction::kRelease, t, address, 0, device);
}

}  // namespace proflaunch::testing
