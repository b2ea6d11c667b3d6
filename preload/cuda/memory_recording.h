// What every memory hook does around the real call: one MemoryOperation
// record per call, failed calls included (a failed allocation is the event
// people most need to see). The hooks keep no allocation table: a free
// records only its address, and the tools find its size from the matching
// allocation. Recorded when the `memory` trace domain is on
// (PROFLAUNCH_TRACE), independently of the `cuda` domain.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <type_traits>

#include "formats/records.h"
#include "preload/cuda/api_call.h"
#include "preload/cuda/driver_services.h"
#include "preload/runtime.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

inline bool memory_domain_recording() noexcept {
  return runtime::recording() && (trace_domains() & kTraceMemory) != 0;
}

// What a memory call did, filled after the real call returned (outputs such
// as the allocated address exist only then).
struct MemoryShape {
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t stream = 0;
  uint64_t handle = 0;
  uint64_t pool_reserved_bytes = 0;
  uint64_t pitch_or_offset_bytes = 0;
  uint32_t flags = 0;
  int32_t device = kCurrentContextDevice;

  static constexpr int32_t kCurrentContextDevice = -2;
};

inline Operation operation_of(format::MemoryAction action) noexcept {
  switch (action) {
    case format::MemoryAction::kAcquire: return Operation::kAllocate;
    case format::MemoryAction::kRelease:
    case format::MemoryAction::kTrim: return Operation::kFree;
    default: return Operation::kOther;
  }
}

// Runs `call_real` and records it. `look_up_before` runs only when the call
// is recorded, before it (a free must ask the driver about its address while
// the address still exists); `describe(result)` runs after it, between the
// record's emit and commit: it may call the driver through DriverServices
// (which never reaches a hook) but nothing that records.
template <typename LookUpBefore, typename CallReal, typename Describe>
CUresult traced_memory(Api api, format::AllocationKind kind, format::MemoryAction action,
                       uint16_t api_flags, LookUpBefore&& look_up_before, CallReal&& call_real,
                       Describe&& describe) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !memory_domain_recording()) return call_real();
  look_up_before();
  CUcontext context = nullptr;
  const int device = current_device(&context);
  DriverCall call(api, operation_of(action), api_flags);
  const CUresult result = call_real();
  if (auto* record = emit<format::MemoryOperationRecord>()) {
    call.finish(record->span, result);
    const MemoryShape shape = describe(result);
    record->device = shape.device == MemoryShape::kCurrentContextDevice ? device : shape.device;
    record->address = shape.address;
    record->bytes = shape.bytes;
    record->stream = shape.stream;
    record->handle = shape.handle;
    record->context = reinterpret_cast<uint64_t>(context);
    record->pool_reserved_bytes = shape.pool_reserved_bytes;
    record->pitch_or_offset_bytes = shape.pitch_or_offset_bytes;
    record->flags = shape.flags;
    record->kind = static_cast<uint8_t>(kind);
    record->action = static_cast<uint8_t>(action);
    const uint64_t correlation = record->span.correlation_id;
    commit();
    stacks::attach_stacks(correlation, format::StackPoint::kMemory);
  }
  return result;
}

inline void nothing_before() noexcept {}

// A pointer or a CUdeviceptr as records carry addresses.
template <typename T>
uint64_t address_value(T value) noexcept {
  if constexpr (std::is_pointer_v<T>) return reinterpret_cast<uint64_t>(value);
  else return static_cast<uint64_t>(value);
}

// The address an output parameter received, or 0 when the call failed.
template <typename T>
uint64_t output_address(CUresult result, T* out) noexcept {
  return result == CUDA_SUCCESS && out != nullptr ? address_value(*out) : 0;
}

}  // namespace proflaunch::cuda
