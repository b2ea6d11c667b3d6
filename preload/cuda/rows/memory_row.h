// Device memory: every call that obtains or gives back memory (runtime
// allocations reach these through cuGetProcAddress), stream-ordered pools,
// pinned and registered host memory, the virtual memory management API that
// growing allocators use, and cuMemGetInfo. One MemoryOperation record per
// call, failed calls included (a failed allocation is the event people most
// need to see), in the `memory` trace domain. A free records only its
// address, and the tools find its size from the matching allocation. Only
// when recording is not continuous (capture windows) are the live blocks
// followed, so that each window starts from them (capture/live_set.h). The
// family is HIP's memory too (hip/hip_rows.h): MemoryRowOf<HipVendor>.
#pragma once

#include <algorithm>

#include "preload/capture/live_set.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/rows/cuda_vendor.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

// An output parameter the call writes: CUdeviceptr is 32 bits wide in the
// CUDA 2.x variants, 64 in the others; host pointers and handles 64.
struct Output {
  const void* at = nullptr;
  uint8_t bytes = 0;

  template <typename T>
  static Output of(T* at) noexcept { return {at, sizeof(T)}; }
  uint64_t read() const noexcept {
    if (at == nullptr) return 0;
    if (bytes == 4) return *static_cast<const uint32_t*>(at);
    if (bytes == 8) return *static_cast<const uint64_t*>(at);
    return 0;
  }
};

enum class PoolLookup : uint8_t {
  kNone,
  kAllocation,  // the pool the allocation came from (its own, or the device's current one)
  kFree,        // the pool of the address, asked before the free (after it the address names nothing)
  kPool,        // the pool passed (trim)
};

template <typename Vendor>
struct MemoryRowOf {
  format::AllocationKind kind;
  format::MemoryAction action;
  uint64_t address = 0;
  Output address_out;
  uint64_t bytes = 0;
  Output pitch_out;      // a pitched allocation's pitch: bytes become pitch * height
  uint64_t height = 0;
  uint64_t handle = 0;
  Output handle_out;
  typename Vendor::Stream stream = nullptr;
  bool has_stream = false;
  typename Vendor::MemoryPool pool = nullptr;
  PoolLookup pool_lookup = PoolLookup::kNone;
  bool pool_queries = true;  // false: the pool and its reserved bytes stay unknown (a captured call)
  uint64_t pitch_or_offset_bytes = 0;
  uint32_t flags = 0;
  int32_t device = kCurrentContextDevice;

  static constexpr int32_t kCurrentContextDevice = -2;

  Operation operation() const noexcept {
    switch (action) {
      case format::MemoryAction::kAcquire: return Operation::kAllocate;
      case format::MemoryAction::kRelease:
      case format::MemoryAction::kTrim: return Operation::kFree;
      default: return Operation::kOther;
    }
  }

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::memory_active()) return call_real();
    // Between capture windows nothing is written, but the live set is
    // followed (capture/live_set.h).
    const bool writing = runtime::recording();
    if (!writing && !capture::follows_memory()) return call_real();
    MemoryRowOf row = describe();
    const typename Vendor::Place place = Vendor::current_place();
    // A stream-ordered allocation or free on a capturing stream becomes a
    // graph node: its memory is obtained when the graph runs, not now, and
    // belongs to no pool the shim could ask about. Asking anyway broke real
    // captures on an H200 (driver 580): the pool queries are left out.
    const auto runs_on = row.has_stream ? Vendor::runs_on(row.stream, Hook::per_thread) : nullptr;
    const bool captured = row.has_stream && Vendor::stream_may_be_capturing(runs_on);
    if (captured) row.pool_queries = false;
    // Another thread's global-mode capture forbids this thread's unsafe
    // calls: the shim's own queries run in relaxed mode while one may be open.
    const bool relax = Vendor::captures_may_be_open();
    if (row.pool_lookup == PoolLookup::kFree && row.pool_queries) {
      const typename Vendor::RelaxedCaptureScope relaxed(relax);
      row.pool = Vendor::pool_of_address(row.address);
    }
    if (!writing) {
      const auto result = call_real();
      if (captured) return result;
      const typename Vendor::RelaxedCaptureScope relaxed(relax);
      row.complete(result, place);
      format::MemoryOperationRecord record{};
      record.span.result = result;
      record.span.api = Hook::api;
      row.template fill<Hook>(record, place);
      capture::note_memory_operation(record);
      return result;
    }
    DriverCall call(Hook::api, row.operation(), variant_flags(Hook::per_thread, row.has_stream));
    const auto result = call_real();
    call.returned();
    if (auto* record = emit<format::MemoryOperationRecord>()) {
      call.finish(record->span, result);
      if (captured) record->span.flags |= format::kApiCaptured;
      {
        const typename Vendor::RelaxedCaptureScope relaxed(relax);
        row.complete(result, place);
        row.template fill<Hook>(*record, place);
      }
      if (!captured) capture::note_memory_operation(*record);
      commit();
      stacks::attach_stacks(call.correlation(), format::StackPoint::kMemory);
      if (captured && result == Vendor::kSuccess) Vendor::record_captured_node(call.correlation(), runs_on);
    }
    return result;
  }

  template <typename Hook>
  void fill(format::MemoryOperationRecord& record, const typename Vendor::Place& place) const noexcept {
    record.device = device == kCurrentContextDevice ? Vendor::recorded_device(place) : device;
    record.address = address;
    record.bytes = bytes;
    record.stream = has_stream ? Vendor::stream_id(stream, Hook::per_thread) : 0;
    record.handle = pool_lookup != PoolLookup::kNone ? reinterpret_cast<uint64_t>(pool) : handle;
    record.context = reinterpret_cast<uint64_t>(place.context);
    record.pool_reserved_bytes = pool_lookup == PoolLookup::kNone ? 0
                                 : pool_queries                 ? Vendor::pool_reserved_bytes(pool)
                                                                : format::kPoolReservedUnknown;
    record.pitch_or_offset_bytes = pitch_or_offset_bytes;
    record.flags = flags;
    record.kind = static_cast<uint8_t>(kind);
    record.action = static_cast<uint8_t>(action);
  }

  // After the call: what its outputs say (nothing when it failed, except the
  // size asked for).
  void complete(typename Vendor::Result result, const typename Vendor::Place& place) noexcept {
    const bool ok = result == Vendor::kSuccess;
    if (address_out.at != nullptr) address = ok ? address_out.read() : 0;
    if (handle_out.at != nullptr) handle = ok ? handle_out.read() : 0;
    if (pitch_out.at != nullptr) {
      const uint64_t pitch = ok ? pitch_out.read() : 0;
      pitch_or_offset_bytes = pitch;
      // What the allocation occupies; a failed one asked for at least this.
      bytes = (pitch != 0 ? pitch : bytes) * height;
    }
    if (pool_lookup == PoolLookup::kAllocation && pool == nullptr && pool_queries) {
      pool = address != 0 ? Vendor::pool_of_address(address) : nullptr;
      if (pool == nullptr) pool = Vendor::current_pool_of_device(place.device);
    }
  }
};
using MemoryRow = MemoryRowOf<CudaVendor>;

// cuMemGetInfo: the driver's view of the device.
struct MemoryInfoRow {
  Output free_out;
  Output total_out;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !memory_domain_recording()) return call_real();
    const MemoryInfoRow row = describe();
    return record_call<format::MemoryInfoRecord, CudaVendor, Hook>(
        Operation::kMemoryInfo, 0, call_real, [&](format::MemoryInfoRecord& record, CUresult result, const auto&) {
          const bool answered = result == CUDA_SUCCESS;
          record.free_bytes = answered ? row.free_out.read() : 0;
          record.total_bytes = answered ? row.total_out.read() : 0;
        });
  }
};

namespace rows {

using format::AllocationKind;
using format::MemoryAction;

struct AllocationClass {
  AllocationKind kind;
  uint32_t flags;
};
inline AllocationClass device_allocation() noexcept { return {AllocationKind::kDevice, 0}; }
inline AllocationClass managed_allocation(unsigned flags) noexcept { return {AllocationKind::kManaged, flags}; }
inline AllocationClass pinned_allocation(unsigned flags) noexcept { return {AllocationKind::kPinnedHost, flags}; }

template <typename Address>
inline uint64_t memory_address(Address address) noexcept {
  if constexpr (std::is_pointer_v<Address>) return reinterpret_cast<uint64_t>(address);
  else return static_cast<uint64_t>(address);
}

template <typename Out>
inline MemoryRow allocate(AllocationClass what, Out* out, uint64_t bytes) noexcept {
  MemoryRow row{what.kind, MemoryAction::kAcquire};
  row.address_out = Output::of(out);
  row.bytes = bytes;
  row.flags = what.flags;
  return row;
}

template <typename Out, typename Pitch>
inline MemoryRow allocate_pitch(Out* out, Pitch* pitch, uint64_t width_bytes, uint64_t height) noexcept {
  MemoryRow row{AllocationKind::kDevice, MemoryAction::kAcquire};
  row.address_out = Output::of(out);
  row.pitch_out = Output::of(pitch);
  row.bytes = width_bytes;
  row.height = height;
  return row;
}

// A managed address is freed by cuMemFree too; it is recorded as device
// memory and the tools take the kind from the allocation.
template <typename Address>
inline MemoryRow release(AllocationClass what, Address address) noexcept {
  MemoryRow row{what.kind, MemoryAction::kRelease};
  row.address = memory_address(address);
  return row;
}

inline MemoryRow register_host(void* p, uint64_t bytes, unsigned flags) noexcept {
  MemoryRow row{AllocationKind::kRegisteredHost, MemoryAction::kAcquire};
  row.address = memory_address(p);
  row.bytes = bytes;
  row.flags = flags;
  return row;
}
inline MemoryRow unregister_host(void* p) noexcept {
  MemoryRow row{AllocationKind::kRegisteredHost, MemoryAction::kRelease};
  row.address = memory_address(p);
  return row;
}

template <typename Size>
inline MemoryInfoRow memory_info(Size* free_bytes, Size* total_bytes) noexcept {
  return {Output::of(free_bytes), Output::of(total_bytes)};
}

// Stream-ordered allocation. A pool reserves memory as it needs it and keeps
// it after frees (up to its release threshold, until a synchronization or a
// trim), so each record also carries the pool's reserved size after the
// call: the only way the tools can tell how much the process holds.
template <typename Out>
inline MemoryRow pool_allocate(Out* out, uint64_t bytes, CUmemoryPool pool, CUstream stream) noexcept {
  MemoryRow row{AllocationKind::kPool, MemoryAction::kAcquire};
  row.address_out = Output::of(out);
  row.bytes = bytes;
  row.pool = pool;
  row.pool_lookup = PoolLookup::kAllocation;
  row.stream = stream;
  row.has_stream = true;
  return row;
}
template <typename Address>
inline MemoryRow pool_free(Address address, CUstream stream) noexcept {
  MemoryRow row{AllocationKind::kPool, MemoryAction::kRelease};
  row.address = memory_address(address);
  row.pool_lookup = PoolLookup::kFree;
  row.stream = stream;
  row.has_stream = true;
  return row;
}
inline MemoryRow pool_trim(CUmemoryPool pool, uint64_t keep_bytes) noexcept {
  MemoryRow row{AllocationKind::kPool, MemoryAction::kTrim};
  row.bytes = keep_bytes;
  row.pool = pool;
  row.pool_lookup = PoolLookup::kPool;
  return row;
}

// Virtual memory management: physical memory (cuMemCreate, cuMemRelease),
// address space (cuMemAddressReserve, cuMemAddressFree) and the mappings
// between them. The tools pair each map with its physical handle.
template <typename Handle, typename Properties>
inline MemoryRow create_physical(Handle* handle, uint64_t size, const Properties* prop) noexcept {
  MemoryRow row{AllocationKind::kPhysical, MemoryAction::kAcquire};
  row.handle_out = Output::of(handle);
  row.bytes = size;
  // Whose memory: its location, not the current context's device.
  row.device = prop != nullptr && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? prop->location.id : -1;
  return row;
}
template <typename Handle>
inline MemoryRow release_physical(Handle handle) noexcept {
  MemoryRow row{AllocationKind::kPhysical, MemoryAction::kRelease};
  row.handle = static_cast<uint64_t>(handle);
  return row;
}
template <typename Out>
inline MemoryRow reserve_address(Out* out, uint64_t size) noexcept {
  MemoryRow row{AllocationKind::kAddressRange, MemoryAction::kAcquire};
  row.address_out = Output::of(out);
  row.bytes = size;
  return row;
}
template <typename Address>
inline MemoryRow free_address(Address address, uint64_t size) noexcept {
  MemoryRow row{AllocationKind::kAddressRange, MemoryAction::kRelease};
  row.address = memory_address(address);
  row.bytes = size;
  return row;
}
template <typename Address, typename Handle>
inline MemoryRow map_memory(Address address, uint64_t size, uint64_t offset, Handle handle) noexcept {
  MemoryRow row{AllocationKind::kMapping, MemoryAction::kAcquire};
  row.address = memory_address(address);
  row.bytes = size;
  row.handle = static_cast<uint64_t>(handle);
  row.pitch_or_offset_bytes = offset;
  return row;
}
template <typename Address>
inline MemoryRow unmap_memory(Address address, uint64_t size) noexcept {
  MemoryRow row{AllocationKind::kMapping, MemoryAction::kRelease};
  row.address = memory_address(address);
  row.bytes = size;
  return row;
}
template <typename Address, typename Access>
inline MemoryRow set_access(Address address, uint64_t size, const Access* desc, size_t count) noexcept {
  MemoryRow row{AllocationKind::kMapping, MemoryAction::kSetAccess};
  row.address = memory_address(address);
  row.bytes = size;
  // The widest access granted to any device.
  for (size_t i = 0; desc != nullptr && i < count; ++i) row.flags = std::max<uint32_t>(row.flags, desc[i].flags);
  return row;
}

}  // namespace rows
}  // namespace proflaunch::cuda
