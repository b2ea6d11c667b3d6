// What the HIP hooks record, by family: the row families of the CUDA hooks
// (preload/cuda/rows), over HIP's types and HIP's few differences
// (hip_vendor.h), built by the expression hip_rows.txt gives each API
// (evaluated only when the call is recorded). The records are the CUDA
// hooks' (formats/records.h): a kernel, copy, memset, allocation or wait
// means the same on either vendor; devices are AMD ones (kAmdDeviceBase).
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/cuda/rows/call_row.h"
#include "preload/cuda/rows/copy_row.h"
#include "preload/cuda/rows/graph_row.h"
#include "preload/cuda/rows/launch_row.h"
#include "preload/cuda/rows/memory_row.h"
#include "preload/cuda/rows/object_row.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/cuda/rows/sync_row.h"
#include "preload/hip/hip_hooks.h"
#include "preload/hip/hip_kernel_launch.h"
#include "preload/hip/hip_services.h"
#include "preload/hip/hip_timing.h"
#include "preload/hip/hip_vendor.h"
#include "preload/record/definitions.h"

namespace proflaunch::hip {

using HipCallRow = cuda::ApiCallRowOf<HipVendor>;
using HipLaunchRow = cuda::LaunchRowOf<HipVendor>;
using HipGraphLaunchRow = cuda::GraphLaunchRowOf<HipVendor>;
using HipCopyRow = cuda::CopyRowOf<HipVendor>;
using HipMemsetRow = cuda::MemorySetRowOf<HipVendor>;
using HipMemoryRow = cuda::MemoryRowOf<HipVendor>;
using HipSyncRow = cuda::SyncRowOf<HipVendor>;
using HipEventRecordRow = cuda::EventRecordRowOf<HipVendor>;

// Stream, event and module creation and destruction.
struct HipLifecycleRow {
  format::ObjectKind object;
  format::LifecycleAction action;
  void* const* created;  // create: where the call writes the handle
  const void* destroyed;  // destroy: the handle
  uint32_t flags;
  int32_t priority;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !HipVendor::recording()) return call_real();
    const HipLifecycleRow row = describe();
    return cuda::record_call<format::ObjectLifecycleRecord, HipVendor, Hook>(
        cuda::Operation::kOther, cuda::variant_flags(Hook::per_thread, false), call_real,
        [&](format::ObjectLifecycleRecord& record, hipError_t result, const HipVendor::Place&) {
          const bool create = row.action == format::LifecycleAction::kCreate;
          record.handle = reinterpret_cast<uint64_t>(
              create ? (result == hipSuccess && row.created != nullptr ? *row.created : nullptr) : row.destroyed);
          record.flags = row.flags;
          record.priority = row.priority;
          record.object = static_cast<uint8_t>(row.object);
          record.action = static_cast<uint8_t>(row.action);
        });
  }
};

// A call recorded as HipCallRow, followed by what the shim must learn from
// it when it succeeded: the thread's device, a kernel's name, a capture.
template <typename Then>
struct HipThenRow {
  Then then;
  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    const auto result = HipCallRow::run<Hook>(describe, call_real);
    describe().then(result);
    return result;
  }
};

// The device address of a __device__ variable (its host shadow `symbol`) plus
// `offset`, or null when the runtime does not know it.
const void* symbol_device_address(const void* symbol, size_t offset) noexcept;

namespace rows {

inline HipCallRow hip_call() noexcept { return {}; }

inline format::Dim3 dims(dim3 d) noexcept { return {d.x, d.y, d.z}; }

// `function` is the kernel's host stub (registered with its name by
// __hipRegisterFunction) or a module's hipFunction_t (named by
// hipModuleGetFunction).
inline HipLaunchRow launch(const void* function, dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream,
                           uint32_t flags = 0) noexcept {
  return {reinterpret_cast<uint64_t>(function), dims(grid), dims(block), static_cast<uint32_t>(shared_bytes), stream,
          flags};
}

// hipStreamAddCallback: the program's function, run when the stream gets
// there (HIP 5.2 has no hipLaunchHostFunc).
inline HipLaunchRow host_function(hipStreamCallback_t callback, hipStream_t stream) noexcept {
  return {reinterpret_cast<uint64_t>(callback), {}, {}, 0, stream, format::kLaunchHostFunction};
}

// hipGraphLaunch: the graph's work as one unit of GPU time on its stream
// (node by node would need an activity API AMD lacks here).
inline HipGraphLaunchRow graph_launch(hipGraphExec_t exec, hipStream_t stream) noexcept {
  return {reinterpret_cast<uint64_t>(exec), stream};
}

inline HipMemoryEnd memory_at(const void* pointer) noexcept { return {reinterpret_cast<uint64_t>(pointer)}; }

inline HipCopyRow copy(const void* dst, const void* src, size_t bytes, hipStream_t stream = nullptr,
                       bool async = false) noexcept {
  return {memory_at(dst), memory_at(src), bytes, stream, async};
}
inline HipCopyRow copy_async(const void* dst, const void* src, size_t bytes, hipStream_t stream) noexcept {
  return copy(dst, src, bytes, stream, true);
}
inline HipCopyRow to_symbol(const void* symbol, const void* src, size_t bytes, size_t offset,
                            hipStream_t stream = nullptr, bool async = false) noexcept {
  return copy(symbol_device_address(symbol, offset), src, bytes, stream, async);
}
inline HipCopyRow from_symbol(void* dst, const void* symbol, size_t bytes, size_t offset,
                              hipStream_t stream = nullptr, bool async = false) noexcept {
  return copy(dst, symbol_device_address(symbol, offset), bytes, stream, async);
}
inline HipCopyRow copy_2d(const void* dst, const void* src, size_t width, size_t height, hipStream_t stream = nullptr,
                          bool async = false) noexcept {
  return copy(dst, src, uint64_t(width) * height, stream, async);
}

inline HipMemsetRow memory_set(const void* dst, uint32_t value, uint8_t element_bytes, size_t count,
                               hipStream_t stream = nullptr, bool async = false) noexcept {
  return {memory_at(dst), value, element_bytes, uint64_t(count) * element_bytes, stream, async};
}

// Stream-ordered allocations (kPool) carry their stream; the pool is not
// asked about (hip_vendor.h).
template <typename Pointer>
inline HipMemoryRow allocate(Pointer** out, size_t bytes, format::AllocationKind kind, hipStream_t stream = nullptr,
                             uint32_t flags = 0) noexcept {
  HipMemoryRow row{kind, format::MemoryAction::kAcquire};
  row.address_out = cuda::Output::of(reinterpret_cast<void**>(out));
  row.bytes = bytes;
  row.flags = flags;
  if (kind == format::AllocationKind::kPool) {
    row.stream = stream;
    row.has_stream = true;
    row.pool_lookup = cuda::PoolLookup::kAllocation;
  }
  return row;
}
inline HipMemoryRow release(const void* pointer, format::AllocationKind kind, hipStream_t stream = nullptr) noexcept {
  HipMemoryRow row{kind, format::MemoryAction::kRelease};
  row.address = reinterpret_cast<uint64_t>(pointer);
  if (kind == format::AllocationKind::kPool) {
    row.stream = stream;
    row.has_stream = true;
    row.pool_lookup = cuda::PoolLookup::kFree;
  }
  return row;
}

template <typename Handle>
inline HipLifecycleRow create(format::ObjectKind object, Handle* created, uint32_t flags = 0,
                              int32_t priority = 0) noexcept {
  return {object, format::LifecycleAction::kCreate, reinterpret_cast<void* const*>(created), nullptr, flags, priority};
}
inline HipLifecycleRow destroy(format::ObjectKind object, const void* handle) noexcept {
  return {object, format::LifecycleAction::kDestroy, nullptr, handle, 0, 0};
}

inline HipSyncRow synchronize_device() noexcept { return {format::SyncTarget::kDevice}; }
inline HipSyncRow synchronize_stream(hipStream_t stream) noexcept {
  return {format::SyncTarget::kStream, stream, true};
}
inline HipSyncRow synchronize_event(hipEvent_t event) noexcept {
  return {format::SyncTarget::kEvent, nullptr, false, reinterpret_cast<uint64_t>(event)};
}
inline HipSyncRow stream_wait_event(hipStream_t stream, hipEvent_t event) noexcept {
  return {format::SyncTarget::kStreamWaitEvent, stream, true, reinterpret_cast<uint64_t>(event)};
}
// The event and the stream it is recorded on, for the waits on it.
inline HipEventRecordRow record_event(hipEvent_t event, hipStream_t stream) noexcept { return {event, stream}; }

struct SetDevice {
  int device;
  void operator()(hipError_t result) const noexcept {
    if (result == hipSuccess) set_current_device(device);
  }
};
inline HipThenRow<SetDevice> set_device(int device) noexcept { return {{device}}; }

struct NameFunction {
  const void* const* function;
  const char* name;
  void operator()(hipError_t result) const noexcept {
    if (result == hipSuccess && function != nullptr && *function != nullptr && name != nullptr)
      define_function(reinterpret_cast<uint64_t>(*function), name);
  }
};
inline HipThenRow<NameFunction> module_function(hipFunction_t* function, const char* name) noexcept {
  return {{reinterpret_cast<const void* const*>(function), name}};
}

struct Capture {
  bool begins;
  void operator()(hipError_t result) const noexcept {
    if (result != hipSuccess) return;
    if (begins) hip_capture_began();
    else hip_capture_ended();
  }
};
inline HipThenRow<Capture> capture_begin() noexcept { return {{true}}; }
inline HipThenRow<Capture> capture_end() noexcept { return {{false}}; }

}  // namespace rows

// __hipRegisterFunction: counted (a program registers every kernel at
// start), and the host stub is named by its device function.
struct HipRegisterFunctionRow {
  const void* host_function;
  const char* name;
  template <typename Hook, typename Describe, typename CallReal>
  static void run(Describe&& describe, CallReal&& call_real) {
    call_real();
    const HipRegisterFunctionRow row = describe();
    if (row.host_function != nullptr && row.name != nullptr)
      define_function(reinterpret_cast<uint64_t>(row.host_function), row.name);
    ReentrancyGuard guard;
    if (guard.outermost() && HipVendor::recording()) cuda::count_call(Hook::api);
  }
};

namespace rows {
inline HipRegisterFunctionRow register_function(const void* host_function, const char* name) noexcept {
  return {host_function, name};
}
}  // namespace rows

}  // namespace proflaunch::hip
