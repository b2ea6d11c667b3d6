// Lifecycles of streams, events, contexts, modules and libraries
// (ObjectLifecycle records), cuEventRecord, and where kernel handles are born
// (so launches can be named). Contexts are also where the GPU timing backend
// must finish before their events die, and where the per-thread context
// cache must forget what it knew (driver_services.h).
#pragma once

#include "preload/cuda/current_context.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/rows/call_row.h"
#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

// What a context call does besides being recorded.
enum class ContextEffect : uint8_t {
  kNone,
  kCreated,           // cuCtxCreate: the new context is current on this thread
  kDestroyed,         // cuCtxDestroy
  kPrimaryRetained,   // remembered, so a release or reset can find it
  kPrimaryReleased,   // destroys it when the last reference goes
  kPrimaryReset,      // always destroys it
};

// The primary context of `device`, once retained (null before).
CUcontext primary_context_of(int device) noexcept;
void remember_primary_context(int device, CUcontext context) noexcept;
// Whether the primary context of `device` is still active after a release.
bool primary_context_active(int device) noexcept;
// The driver's unique id of a stream (cuStreamGetId), 0 when unknown.
uint64_t stream_unique_id(CUstream stream) noexcept;

struct ObjectRow {
  format::ObjectKind object;
  format::LifecycleAction action;
  void* const* output = nullptr;  // a creation's handle, written by the call
  uint64_t handle = 0;            // a destruction's handle
  uint32_t flags = 0;
  int32_t priority = 0;
  int32_t device = -1;            // -1: the current context's
  ContextEffect effect = ContextEffect::kNone;

  Operation operation() const noexcept {
    // Streams and events are what runtime calls create and destroy;
    // contexts, modules and libraries are the runtime's own initialization.
    if (object == format::ObjectKind::kStream) return Operation::kStreamObject;
    if (object == format::ObjectKind::kEvent) return Operation::kEventObject;
    return Operation::kOther;
  }

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    const bool recorded = guard.outermost() && cuda_domain_recording();
    ObjectRow row = describe();
    // A context about to be destroyed: the timing backend resolves what it
    // can while its events still exist (not for the shim's own calls).
    CUcontext dying = nullptr;
    if (guard.outermost()) {
      if (row.effect == ContextEffect::kDestroyed) dying = reinterpret_cast<CUcontext>(row.handle);
      if (row.effect == ContextEffect::kPrimaryReleased || row.effect == ContextEffect::kPrimaryReset)
        dying = primary_context_of(row.device);
      if (dying != nullptr) gpu_timing().before_context_teardown(dying);
    }
    // A stream's id must be read while it exists.
    uint64_t id = 0;
    if (recorded && row.object == format::ObjectKind::kStream && row.action == format::LifecycleAction::kDestroy)
      id = stream_unique_id(reinterpret_cast<CUstream>(row.handle));
    CUcontext context = nullptr;
    const int current = recorded ? current_device(&context) : -1;
    DriverCall call(Hook::api, row.operation(), 0);
    const CUresult result = call_real();
    call.returned();
    if (result == CUDA_SUCCESS && row.output != nullptr) row.handle = reinterpret_cast<uint64_t>(*row.output);
    apply_context_effect(row, dying, result);
    if (!recorded) return result;
    if (row.object == format::ObjectKind::kStream && row.action == format::LifecycleAction::kCreate && row.handle != 0)
      id = stream_unique_id(reinterpret_cast<CUstream>(row.handle));
    if (auto* record = emit<format::ObjectLifecycleRecord>()) {
      call.finish(record->span, result);
      record->device = row.device >= 0 ? row.device : current;
      record->handle = result == CUDA_SUCCESS || row.output == nullptr ? row.handle : 0;
      record->context = reinterpret_cast<uint64_t>(context);
      record->id = id;
      record->flags = row.flags;
      record->priority = row.priority;
      record->object = static_cast<uint8_t>(row.object);
      record->action = static_cast<uint8_t>(row.action);
      commit();
    }
    return result;
  }

  static void apply_context_effect(const ObjectRow& row, CUcontext dying, CUresult result) noexcept {
    switch (row.effect) {
      case ContextEffect::kNone: return;
      case ContextEffect::kCreated: forget_current_context(); return;
      case ContextEffect::kPrimaryRetained:
        if (result == CUDA_SUCCESS && !inside_profiler())
          remember_primary_context(row.device, reinterpret_cast<CUcontext>(row.handle));
        return;
      case ContextEffect::kDestroyed:
      case ContextEffect::kPrimaryReleased:
      case ContextEffect::kPrimaryReset: {
        forget_all_current_contexts();
        if (dying == nullptr || result != CUDA_SUCCESS) return;
        const bool destroyed = row.effect != ContextEffect::kPrimaryReleased || !primary_context_active(row.device);
        gpu_timing().after_context_teardown(dying, destroyed);
        return;
      }
    }
  }
};

// cuEventRecord and hipEventRecord (and their variants): an ApiCall with
// the event and the stream it was recorded on, which a later wait for the
// event (SynchronizeRecord) waits for; the operation a runtime
// cudaEventRecord frame takes its name from. The family is HIP's too
// (hip/hip_rows.h): EventRecordRowOf<HipVendor>.
template <typename Vendor>
struct EventRecordRowOf {
  const void* event;
  typename Vendor::Stream stream;  // as passed (normalized with the variant in run())

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::recording()) return call_real();
    const EventRecordRowOf row = describe();
    DriverCall call(Hook::api, Operation::kEventRecord, variant_flags(Hook::per_thread, true));
    const auto result = call_real();
    call.returned();
    if (auto* record = emit<format::ApiCallRecord>()) {
      call.finish(record->span, result_code(result));
      record->event = reinterpret_cast<uint64_t>(row.event);
      record->stream = Vendor::stream_id(row.stream, Hook::per_thread);
      commit();
    }
    return result;
  }
};

// Where kernel handles are born: their names are remembered whether or not
// the call itself is recorded (a launch may be recorded later).
enum class Naming : uint8_t { kModuleFunction, kLibraryKernel, kKernelFunction };

struct NamingRow {
  Naming naming;
  void* const* output;
  const char* name;
  CUkernel kernel;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    const CUresult result = ApiCallRow::run<Hook>(describe, call_real);
    if (result != CUDA_SUCCESS || inside_profiler() || !cuda_hooks_active()) return result;
    const NamingRow row = describe();
    if (row.output == nullptr || *row.output == nullptr) return result;
    const auto handle = reinterpret_cast<uint64_t>(*row.output);
    if (row.naming == Naming::kKernelFunction) name_kernel_function(handle, row.kernel);
    else if (row.name != nullptr) name_function(handle, row.name);
    return result;
  }
};

namespace rows {

template <typename Handle>
inline void* const* output_of(Handle* out) noexcept { return reinterpret_cast<void* const*>(out); }
template <typename Handle>
inline uint64_t handle_value(Handle handle) noexcept { return reinterpret_cast<uint64_t>(handle); }

inline ObjectRow create_stream(CUstream* out, unsigned flags, int priority) noexcept {
  return {format::ObjectKind::kStream, format::LifecycleAction::kCreate, output_of(out), 0, flags, priority};
}
inline ObjectRow destroy_stream(CUstream stream) noexcept {
  return {format::ObjectKind::kStream, format::LifecycleAction::kDestroy, nullptr, handle_value(stream)};
}
inline ObjectRow create_event(CUevent* out, unsigned flags) noexcept {
  return {format::ObjectKind::kEvent, format::LifecycleAction::kCreate, output_of(out), 0, flags};
}
inline ObjectRow destroy_event(CUevent event) noexcept {
  return {format::ObjectKind::kEvent, format::LifecycleAction::kDestroy, nullptr, handle_value(event)};
}
inline EventRecordRowOf<CudaVendor> record_event(CUevent event, CUstream stream) noexcept { return {event, stream}; }
inline ObjectRow create_context(CUcontext* out, unsigned flags, CUdevice device) noexcept {
  return {format::ObjectKind::kContext, format::LifecycleAction::kCreate, output_of(out), 0, flags, 0, device,
          ContextEffect::kCreated};
}
inline ObjectRow destroy_context(CUcontext context) noexcept {
  return {format::ObjectKind::kContext, format::LifecycleAction::kDestroy, nullptr, handle_value(context), 0, 0, -1,
          ContextEffect::kDestroyed};
}
inline ObjectRow retain_primary_context(CUcontext* out, CUdevice device) noexcept {
  return {format::ObjectKind::kContext, format::LifecycleAction::kCreate, output_of(out), 0, 0, 0, device,
          ContextEffect::kPrimaryRetained};
}
inline ObjectRow release_primary_context(CUdevice device) noexcept {
  return {format::ObjectKind::kContext, format::LifecycleAction::kDestroy, nullptr, 0, 0, 0, device,
          ContextEffect::kPrimaryReleased};
}
inline ObjectRow reset_primary_context(CUdevice device) noexcept {
  return {format::ObjectKind::kContext, format::LifecycleAction::kDestroy, nullptr, 0, 0, 0, device,
          ContextEffect::kPrimaryReset};
}
inline ObjectRow load_module(CUmodule* out) noexcept {
  return {format::ObjectKind::kModule, format::LifecycleAction::kCreate, output_of(out)};
}
inline ObjectRow unload_module(CUmodule module) noexcept {
  return {format::ObjectKind::kModule, format::LifecycleAction::kDestroy, nullptr, handle_value(module)};
}
inline ObjectRow load_library(CUlibrary* out) noexcept {
  return {format::ObjectKind::kLibrary, format::LifecycleAction::kCreate, output_of(out)};
}
inline ObjectRow unload_library(CUlibrary library) noexcept {
  return {format::ObjectKind::kLibrary, format::LifecycleAction::kDestroy, nullptr, handle_value(library)};
}
inline NamingRow name_function(CUfunction* out, const char* name) noexcept {
  return {Naming::kModuleFunction, output_of(out), name, nullptr};
}
inline NamingRow name_kernel(CUkernel* out, const char* name) noexcept {
  return {Naming::kLibraryKernel, output_of(out), name, nullptr};
}
inline NamingRow name_kernel_function(CUfunction* out, CUkernel kernel) noexcept {
  return {Naming::kKernelFunction, output_of(out), nullptr, kernel};
}

}  // namespace rows
}  // namespace proflaunch::cuda
