// What the HIP hooks record, by family: one row type per family, built by
// the expression hip_rows.txt gives each API (evaluated only when the call
// is recorded), then run around the real call. The records are the CUDA
// hooks' (formats/records.h): a kernel, copy, memset, allocation or wait
// means the same on either vendor; devices are AMD ones (kAmdDeviceBase).
#pragma once

#include <cstdint>
#include <type_traits>

#include "preload/base/guard.h"
#include "preload/capture/live_set.h"
#include "preload/cuda/api_call.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/hip/hip_hooks.h"
#include "preload/hip/hip_services.h"
#include "preload/hip/hip_timing.h"
#include "preload/record/definitions.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::hip {

using cuda::DriverCall;
using cuda::Operation;

inline bool hip_recording() noexcept { return cuda::cuda_domain_recording(); }
inline bool memory_active() noexcept {
  return runtime::active() && (trace_domains() & (kTraceCuda | kTraceMemory)) != 0;
}

inline uint64_t stream_id(hipStream_t stream, bool per_thread) noexcept {
  return cuda::stream_handle(reinterpret_cast<CUstream>(stream), per_thread);
}

// The stream a NULL handle means in this variant (_spt: the thread's own).
inline hipStream_t runs_on(hipStream_t stream, bool per_thread) noexcept {
  return stream == nullptr && per_thread ? hipStreamPerThread : stream;
}

// Every API without a row of its own: its name, duration and result.
struct HipCallRow {
  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&&, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !hip_recording()) return call_real();
    if (cuda::counted_api(Hook::api)) return cuda::counted_call<Hook>(call_real);
    DriverCall call(Hook::api, Operation::kOther, cuda::variant_flags(Hook::per_thread, false));
    if constexpr (std::is_void_v<decltype(call_real())>) {
      call_real();
      call.returned();
      cuda::record_api_call(call, 0);
    } else {
      const auto result = call_real();
      call.returned();
      cuda::record_api_call(call, result);
      return result;
    }
  }
};

// A library call in progress on this thread (hip_library_frame.h): the
// stream it was given, its correlation id and the start event taken there.
struct HipFrameEntry {
  hipStream_t stream;
  uint64_t correlation_id;
  HipTimingToken start;
  bool taken;
};
struct HipLibraryFrame {
  uint32_t count;  // 0 or 1
  HipFrameEntry entry;
};
extern __thread __attribute__((tls_model("initial-exec"))) HipLibraryFrame tls_hip_library_frame;

inline HipFrameEntry* take_library_frame_entry(hipStream_t stream) noexcept {
  HipLibraryFrame& frame = tls_hip_library_frame;
  if (frame.count == 0 || frame.entry.taken || frame.entry.stream != stream) return nullptr;
  frame.entry.taken = true;
  return &frame.entry;
}

// Work submitted to a stream: the span, then the start event, the real
// call, the end event, the record, the GPU time (preload/cuda's order,
// stream_operation.h).
class HipStreamOperation {
 public:
  // `launch`: a kernel launch, which takes the entry of a library call in
  // progress on its stream (hip_library_frame.h).
  HipStreamOperation(uint16_t api, bool per_thread, bool async, hipStream_t stream, bool done_by_return,
                     bool launch = false) noexcept
      : ordinal_(current_device()),
        stream_(runs_on(stream, per_thread)),
        stream_id_(stream_id(stream, per_thread)),
        library_(launch ? take_library_frame_entry(stream_) : nullptr),
        call_(api, Operation::kOther, cuda::variant_flags(per_thread, async),
              library_ != nullptr ? library_->correlation_id : 0),
        token_(library_ != nullptr ? library_->start
               : hip_timing_enabled() ? hip_timing_before(stream_, ordinal_, async, done_by_return)
                                      : HipTimingToken{}) {}

  void returned(hipError_t result) noexcept {
    call_.returned();
    submitted_ = result == hipSuccess;
    hip_timing_returned(token_, stream_, submitted_);
  }

  template <typename Record>
  void finish(Record& record, hipError_t result) noexcept {
    call_.finish(record.span, static_cast<int32_t>(result));
    if (token_.captured) record.span.flags |= format::kApiCaptured;
    record.device = recorded_device(ordinal_);
    record.stream = stream_id_;
    record.context = 0;
  }

  void queue(format::GpuActivityKind kind) noexcept {
    if (submitted_ && hip_timing_enabled())
      hip_timing_queue(token_, call_.correlation(), stream_id_, recorded_device(ordinal_), kind);
  }

  uint64_t correlation() const noexcept { return call_.correlation(); }

 private:
  int ordinal_;
  hipStream_t stream_;
  uint64_t stream_id_;
  HipFrameEntry* library_;  // a library call's entry this launch took, else null
  DriverCall call_;
  HipTimingToken token_;
  bool submitted_ = false;
};

// What every stream-operation row does once its operation is open: the real
// call, the end event, the record (`fill` adds the row's own fields), the
// call stack, then the GPU time.
template <typename Record, typename CallReal, typename Fill>
hipError_t submit(HipStreamOperation& operation, CallReal&& call_real, format::GpuActivityKind kind,
                  Fill&& fill) {
  const hipError_t result = call_real();
  operation.returned(result);
  if (auto* record = emit<Record>()) {
    operation.finish(*record, result);
    fill(*record);
    commit();
    stacks::attach_stacks(operation.correlation(), format::StackPoint::kLaunch);
  }
  operation.queue(kind);
  return result;
}

// hipGraphLaunch: the graph's work as one unit of GPU time on its stream
// (node by node would need an activity API AMD lacks here).
struct HipGraphLaunchRow {
  hipGraphExec_t exec;
  hipStream_t stream;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !hip_recording()) return call_real();
    const HipGraphLaunchRow row = describe();
    HipStreamOperation operation(Hook::api, Hook::per_thread, true, row.stream, false);
    return submit<format::GraphLaunchRecord>(operation, call_real, format::GpuActivityKind::kGraph, [&](auto& record) {
      record.graph_exec = reinterpret_cast<uint64_t>(row.exec);
    });
  }
};

// Kernel launches. `function` is the kernel's host stub (registered with
// its name by __hipRegisterFunction) or a module's hipFunction_t (named by
// hipModuleGetFunction).
struct HipLaunchRow {
  const void* function;
  format::Dim3 grid, block;
  uint32_t shared_bytes;
  hipStream_t stream;
  uint32_t flags;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !hip_recording()) return call_real();
    const HipLaunchRow row = describe();
    HipStreamOperation operation(Hook::api, Hook::per_thread, true, row.stream, false, /*launch=*/true);
    return submit<format::KernelLaunchRecord>(operation, call_real, format::GpuActivityKind::kKernel, [&](auto& record) {
      record.function = reinterpret_cast<uint64_t>(row.function);
      record.grid = row.grid;
      record.block = row.block;
      record.dynamic_shared_bytes = row.shared_bytes;
      record.launch_flags = row.flags;
    });
  }
};

// Where a pointer lives, from the runtime's own attributes (an address it
// does not know is pageable host memory, as HIP says).
struct HipMemoryEnd {
  uint64_t address = 0;
  format::MemoryKind kind = format::MemoryKind::kUnknown;
  int32_t device = -1;
};
HipMemoryEnd classify(const void* pointer) noexcept;

// The device address of a __device__ variable (its host shadow `symbol`) plus
// `offset`, or null when the runtime does not know it.
const void* symbol_device_address(const void* symbol, size_t offset) noexcept;

struct HipCopyRow {
  const void* dst;
  const void* src;
  uint64_t bytes;
  hipStream_t stream;
  bool async;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !hip_recording()) return call_real();
    const HipCopyRow row = describe();
    const HipMemoryEnd dst = classify(row.dst), src = classify(row.src);
    // HIP's synchronous copies return once the copy is done.
    HipStreamOperation operation(Hook::api, Hook::per_thread, row.async, row.stream, !row.async);
    return submit<format::MemoryCopyRecord>(operation, call_real, format::GpuActivityKind::kMemoryCopy, [&](auto& record) {
      const format::CopyDirection direction = direction_between(src, dst);
      record.bytes = row.bytes;
      record.src = src.address;
      record.dst = dst.address;
      record.direction = static_cast<uint8_t>(direction);
      record.src_kind = static_cast<uint8_t>(src.kind);
      record.dst_kind = static_cast<uint8_t>(dst.kind);
      record.peer_device = direction == format::CopyDirection::kPeer ? src.device : -1;
      record.src_device = src.device;
      record.dst_device = dst.device;
    });
  }

  static format::CopyDirection direction_between(const HipMemoryEnd& src, const HipMemoryEnd& dst) noexcept;
};

struct HipMemsetRow {
  const void* dst;
  uint32_t value;
  uint8_t element_bytes;
  uint64_t bytes;
  hipStream_t stream;
  bool async;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !hip_recording()) return call_real();
    const HipMemsetRow row = describe();
    const HipMemoryEnd dst = classify(row.dst);
    HipStreamOperation operation(Hook::api, Hook::per_thread, row.async, row.stream, false);
    return submit<format::MemorySetRecord>(operation, call_real, format::GpuActivityKind::kMemorySet, [&](auto& record) {
      record.bytes = row.bytes;
      record.dst = dst.address;
      record.value = row.value;
      record.element_bytes = row.element_bytes;
      record.dst_kind = static_cast<uint8_t>(dst.kind);
    });
  }
};

// What a call row records around the real call when it submits no GPU
// work: the span on the calling thread's device, the record (`fill` adds
// the row's fields, given the result), and its stack at `point` (none: 0).
template <typename Record, typename Hook, typename CallReal, typename Fill>
hipError_t record_call(CallReal&& call_real, uint16_t flags, uint8_t point, Fill&& fill) {
  const int ordinal = current_device();
  DriverCall call(Hook::api, Operation::kOther, flags);
  const hipError_t result = call_real();
  call.returned();
  if (auto* record = emit<Record>()) {
    call.finish(record->span, static_cast<int32_t>(result));
    record->device = recorded_device(ordinal);
    fill(*record, result);
    commit();
    if (point != 0) stacks::attach_stacks(call.correlation(), static_cast<format::StackPoint>(point));
  }
  return result;
}

// Memory obtained or given back, into the memory model (proftrace memory).
struct HipMemoryRow {
  void** out;             // acquire: where the call writes the address
  const void* released;   // release: the address given back
  uint64_t bytes;
  format::AllocationKind kind;
  format::MemoryAction action;
  hipStream_t stream;     // stream-ordered (kPool)
  uint32_t flags;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !memory_active()) return call_real();
    const HipMemoryRow row = describe();
    // Between capture windows: only the live set (capture/live_set.h).
    if (!runtime::recording()) {
      if (!capture::follows_memory()) return call_real();
      const int ordinal = current_device();
      const hipError_t result = call_real();
      format::MemoryOperationRecord record{};
      record.span.result = static_cast<int32_t>(result);
      record.span.api = Hook::api;
      record.device = recorded_device(ordinal);
      row.fill<Hook>(record, result);
      capture::note_memory_operation(record);
      return result;
    }
    return record_call<format::MemoryOperationRecord, Hook>(
        call_real, cuda::variant_flags(Hook::per_thread, row.stream != nullptr),
        static_cast<uint8_t>(format::StackPoint::kMemory), [&](auto& record, hipError_t result) {
          row.fill<Hook>(record, result);
          capture::note_memory_operation(record);
        });
  }

  template <typename Hook>
  void fill(format::MemoryOperationRecord& record, hipError_t result) const noexcept {
    record.address = action == format::MemoryAction::kAcquire
                         ? (result == hipSuccess && out != nullptr ? reinterpret_cast<uint64_t>(*out) : 0)
                         : reinterpret_cast<uint64_t>(released);
    record.bytes = action == format::MemoryAction::kAcquire ? bytes : 0;
    record.stream = kind == format::AllocationKind::kPool ? stream_id(stream, Hook::per_thread) : 0;
    record.pool_reserved_bytes = format::kPoolReservedUnknown;
    record.flags = flags;
    record.kind = static_cast<uint8_t>(kind);
    record.action = static_cast<uint8_t>(action);
  }
};

// Where the host waits for the GPU.
struct HipSyncRow {
  format::SyncTarget target;
  hipStream_t stream;
  hipEvent_t event;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !hip_recording()) return call_real();
    const HipSyncRow row = describe();
    return record_call<format::SynchronizeRecord, Hook>(
        call_real, cuda::variant_flags(Hook::per_thread, false), static_cast<uint8_t>(format::StackPoint::kSync),
        [&](auto& record, hipError_t) {
          const bool on_stream =
              row.target == format::SyncTarget::kStream || row.target == format::SyncTarget::kStreamWaitEvent;
          record.stream = on_stream ? stream_id(row.stream, Hook::per_thread) : 0;
          record.event = reinterpret_cast<uint64_t>(row.event);
          record.target = static_cast<uint8_t>(row.target);
        });
  }
};

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
    if (!guard.outermost() || !hip_recording()) return call_real();
    const HipLifecycleRow row = describe();
    return record_call<format::ObjectLifecycleRecord, Hook>(
        call_real, cuda::variant_flags(Hook::per_thread, false), 0, [&](auto& record, hipError_t result) {
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

namespace rows {

inline HipCallRow hip_call() noexcept { return {}; }

inline format::Dim3 dims(dim3 d) noexcept { return {d.x, d.y, d.z}; }

inline HipLaunchRow launch(const void* function, dim3 grid, dim3 block, size_t shared_bytes, hipStream_t stream,
                           uint32_t flags = 0) noexcept {
  return {function, dims(grid), dims(block), static_cast<uint32_t>(shared_bytes), stream, flags};
}
inline HipLaunchRow module_launch(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                  unsigned bz, size_t shared_bytes, hipStream_t stream) noexcept {
  return {f, {gx, gy, gz}, {bx, by, bz}, static_cast<uint32_t>(shared_bytes), stream, 0};
}
// hipExtModuleLaunchKernel: work sizes in threads.
inline HipLaunchRow work_size_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
                                     uint32_t lz, size_t shared_bytes, hipStream_t stream) noexcept {
  auto blocks = [](uint32_t global, uint32_t local) { return local == 0 ? 0u : (global + local - 1) / local; };
  return {f, {blocks(gx, lx), blocks(gy, ly), blocks(gz, lz)}, {lx, ly, lz}, static_cast<uint32_t>(shared_bytes),
          stream, format::kLaunchExtended};
}

inline HipGraphLaunchRow graph_launch(hipGraphExec_t exec, hipStream_t stream) noexcept { return {exec, stream}; }

inline HipCopyRow copy(const void* dst, const void* src, size_t bytes, hipStream_t stream = nullptr,
                       bool async = false) noexcept {
  return {dst, src, bytes, stream, async};
}
inline HipCopyRow copy_async(const void* dst, const void* src, size_t bytes, hipStream_t stream) noexcept {
  return {dst, src, bytes, stream, true};
}
inline HipCopyRow to_symbol(const void* symbol, const void* src, size_t bytes, size_t offset,
                            hipStream_t stream = nullptr, bool async = false) noexcept {
  return {symbol_device_address(symbol, offset), src, bytes, stream, async};
}
inline HipCopyRow from_symbol(void* dst, const void* symbol, size_t bytes, size_t offset,
                              hipStream_t stream = nullptr, bool async = false) noexcept {
  return {dst, symbol_device_address(symbol, offset), bytes, stream, async};
}
inline HipCopyRow copy_2d(const void* dst, const void* src, size_t width, size_t height, hipStream_t stream = nullptr,
                          bool async = false) noexcept {
  return {dst, src, uint64_t(width) * height, stream, async};
}

inline HipMemsetRow memory_set(const void* dst, uint32_t value, uint8_t element_bytes, size_t count,
                           hipStream_t stream = nullptr, bool async = false) noexcept {
  return {dst, value, element_bytes, uint64_t(count) * element_bytes, stream, async};
}

template <typename Pointer>
inline HipMemoryRow allocate(Pointer** out, size_t bytes, format::AllocationKind kind, hipStream_t stream = nullptr,
                             uint32_t flags = 0) noexcept {
  return {reinterpret_cast<void**>(out), nullptr, bytes, kind, format::MemoryAction::kAcquire, stream, flags};
}
inline HipMemoryRow release(const void* pointer, format::AllocationKind kind, hipStream_t stream = nullptr) noexcept {
  return {nullptr, pointer, 0, kind, format::MemoryAction::kRelease, stream, 0};
}

template <typename Handle>
inline HipLifecycleRow create(format::ObjectKind object, Handle* created, uint32_t flags = 0,
                              int32_t priority = 0) noexcept {
  return {object, format::LifecycleAction::kCreate, reinterpret_cast<void* const*>(created), nullptr, flags, priority};
}
inline HipLifecycleRow destroy(format::ObjectKind object, const void* handle) noexcept {
  return {object, format::LifecycleAction::kDestroy, nullptr, handle, 0, 0};
}

inline HipSyncRow synchronize_device() noexcept { return {format::SyncTarget::kDevice, nullptr, nullptr}; }
inline HipSyncRow synchronize_stream(hipStream_t stream) noexcept { return {format::SyncTarget::kStream, stream, nullptr}; }
inline HipSyncRow synchronize_event(hipEvent_t event) noexcept { return {format::SyncTarget::kEvent, nullptr, event}; }
inline HipSyncRow stream_wait_event(hipStream_t stream, hipEvent_t event) noexcept {
  return {format::SyncTarget::kStreamWaitEvent, stream, event};
}

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
    if (guard.outermost() && hip_recording()) cuda::count_call(Hook::api);
  }
};

namespace rows {
inline HipRegisterFunctionRow register_function(const void* host_function, const char* name) noexcept {
  return {host_function, name};
}
}  // namespace rows

}  // namespace proflaunch::hip
