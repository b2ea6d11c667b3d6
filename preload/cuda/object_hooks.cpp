// Lifecycle of streams, events, contexts, modules and libraries, and where
// kernel handles are born (so launches can be named). Creation and
// destruction are recorded as ObjectLifecycle records; cuEventRecord as an
// API call.
#include <cuda.h>

#include "preload/cuda/api_call.h"
#include "preload/cuda/driver_services.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/hook_registry.h"
#include "preload/cuda/recording.h"

extern "C" {
CUresult cuEventRecord_ptsz(CUevent, CUstream);
CUresult cuEventRecordWithFlags_ptsz(CUevent, CUstream, unsigned int);
}

namespace proflaunch::cuda {
namespace {

using format::LifecycleAction;
using format::ObjectKind;

void* real_cuStreamCreate;
void* real_cuStreamCreateWithPriority;
void* real_cuStreamDestroy_v2;
void* real_cuEventCreate;
void* real_cuEventDestroy_v2;
void* real_cuEventRecord;
void* real_cuEventRecord_ptsz;
void* real_cuEventRecordWithFlags;
void* real_cuEventRecordWithFlags_ptsz;
void* real_cuCtxCreate_v4;
void* real_cuCtxDestroy_v2;
void* real_cuDevicePrimaryCtxRetain;
void* real_cuDevicePrimaryCtxRelease_v2;
void* real_cuDevicePrimaryCtxReset_v2;
void* real_cuModuleLoadData;
void* real_cuModuleLoadDataEx;
void* real_cuModuleLoadFatBinary;
void* real_cuModuleUnload;
void* real_cuModuleGetFunction;
void* real_cuLibraryLoadData;
void* real_cuLibraryUnload;
void* real_cuLibraryGetKernel;
void* real_cuKernelGetFunction;

struct ObjectShape {
  ObjectKind object;
  LifecycleAction action;
  uint64_t handle = 0;
  uint64_t id = 0;
  uint32_t flags = 0;
  int32_t priority = 0;
  int32_t device = -1;  // -1: the current context's
};

// `describe` runs after the real call (the handle of a creation is its
// output) and only when recording.
// Streams and events are what runtime calls create and destroy; contexts,
// modules and libraries are the runtime's own initialization.
Operation operation_of(Api api) {
  switch (api) {
    case Api::cuStreamCreate:
    case Api::cuStreamCreateWithPriority:
    case Api::cuStreamDestroy: return Operation::kStreamObject;
    case Api::cuEventCreate:
    case Api::cuEventDestroy: return Operation::kEventObject;
    default: return Operation::kOther;
  }
}

template <typename CallReal, typename Describe>
CUresult traced_object(Api api, CallReal&& call_real, Describe&& describe) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !cuda_domain_recording()) return call_real();
  CUcontext context = nullptr;
  const int current = current_device(&context);
  DriverCall call(api, operation_of(api), 0);
  const CUresult result = call_real();
  const ObjectShape shape = describe(result);
  if (auto* record = emit<format::ObjectLifecycleRecord>()) {
    call.finish(record->span, result);
    record->device = shape.device >= 0 ? shape.device : current;
    record->handle = shape.handle;
    record->context = reinterpret_cast<uint64_t>(context);
    record->id = shape.id;
    record->flags = shape.flags;
    record->priority = shape.priority;
    record->object = static_cast<uint8_t>(shape.object);
    record->action = static_cast<uint8_t>(shape.action);
    commit();
  }
  return result;
}

template <typename CallReal>
CUresult traced_api_call(Api api, bool per_thread, CallReal&& call_real) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !cuda_domain_recording()) return call_real();
  DriverCall call(api, Operation::kEventRecord, variant_flags(per_thread, true));
  const CUresult result = call_real();
  if (auto* record = emit<format::ApiCallRecord>()) {
    call.finish(record->span, result);
    commit();
  }
  return result;
}

uint64_t stream_id(CUstream stream) {
  unsigned long long id = 0;
  const DriverServices& driver = driver_services();
  if (driver.stream_get_id == nullptr || driver.stream_get_id(stream, &id) != CUDA_SUCCESS) return 0;
  return id;
}

template <typename T>
uint64_t handle_of(CUresult result, T* out) {
  return result == CUDA_SUCCESS && out != nullptr ? reinterpret_cast<uint64_t>(*out) : 0;
}

// Kernel handles born in a library or module get their names here, whether
// or not the call is recorded: a launch may be recorded later.
void name_if_created(CUresult result, void* handle, const char* name) {
  if (result == CUDA_SUCCESS && handle != nullptr && name != nullptr && !inside_profiler() &&
      cuda_domain_recording())
    name_function(reinterpret_cast<uint64_t>(handle), name);
}

// The primary context of each device, so that a release or reset can let the
// timing backend finish with that context first.
constexpr int kMaxDevices = 64;
CUcontext g_primary_context[kMaxDevices];

CUcontext primary_context_of(CUdevice device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  return __atomic_load_n(&g_primary_context[device], __ATOMIC_ACQUIRE);
}

// Wraps a primary-context release or reset, which may destroy the context
// (the last release does: the runtime's exit path). The timing backend
// resolves what it can before, and gives up the rest after, if it is gone.
template <typename CallReal>
CUresult primary_context_teardown(CUdevice device, bool always_destroys, CallReal&& call_real) {
  CUcontext context = proflaunch::inside_profiler() ? nullptr : primary_context_of(device);
  if (context != nullptr) gpu_timing().before_context_teardown(context);
  const CUresult result = call_real();
  if (context != nullptr && result == CUDA_SUCCESS) {
    bool destroyed = always_destroys;
    if (!destroyed) {
      using GetState = CUresult(CUdevice, unsigned int*, int*);
      static void* slot = nullptr;
      auto* get_state = real_function<GetState>(slot, "cuDevicePrimaryCtxGetState", kDriverLibrary);
      unsigned int flags = 0;
      int active = 1;
      destroyed = get_state != nullptr && get_state(device, &flags, &active) == CUDA_SUCCESS && !active;
    }
    gpu_timing().after_context_teardown(context, destroyed);
  }
  return result;
}

CUresult event_record(bool pt, CUevent event, CUstream stream) {
  auto* real = pt ? PROFLAUNCH_REAL(cuEventRecord_ptsz, kDriverLibrary)
                  : PROFLAUNCH_REAL(cuEventRecord, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_api_call(Api::cuEventRecord, pt, [&] { return real(event, stream); });
}

CUresult event_record_with_flags(bool pt, CUevent event, CUstream stream, unsigned int flags) {
  auto* real = pt ? PROFLAUNCH_REAL(cuEventRecordWithFlags_ptsz, kDriverLibrary)
                  : PROFLAUNCH_REAL(cuEventRecordWithFlags, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_api_call(Api::cuEventRecordWithFlags, pt, [&] { return real(event, stream, flags); });
}

}  // namespace
}  // namespace proflaunch::cuda

namespace pc = proflaunch::cuda;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuStreamCreate, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuStreamCreate, [&] { return real(stream, flags); }, [&](CUresult r) {
    const uint64_t handle = handle_of(r, stream);
    return ObjectShape{ObjectKind::kStream, LifecycleAction::kCreate, handle,
                       handle ? stream_id(*stream) : 0, flags, 0};
  });
}

PROFLAUNCH_EXPORT CUresult cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuStreamCreateWithPriority, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuStreamCreateWithPriority, [&] { return real(stream, flags, priority); },
                       [&](CUresult r) {
                         const uint64_t handle = handle_of(r, stream);
                         return ObjectShape{ObjectKind::kStream, LifecycleAction::kCreate, handle,
                                            handle ? stream_id(*stream) : 0, flags, priority};
                       });
}

PROFLAUNCH_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuStreamDestroy_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  // The id must be read while the stream exists.
  const uint64_t id = cuda_domain_recording() ? stream_id(stream) : 0;
  return traced_object(Api::cuStreamDestroy, [&] { return real(stream); }, [&](CUresult) {
    return ObjectShape{ObjectKind::kStream, LifecycleAction::kDestroy, reinterpret_cast<uint64_t>(stream), id};
  });
}

PROFLAUNCH_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuEventCreate, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuEventCreate, [&] { return real(event, flags); }, [&](CUresult r) {
    return ObjectShape{ObjectKind::kEvent, LifecycleAction::kCreate, handle_of(r, event), 0, flags};
  });
}

PROFLAUNCH_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuEventDestroy_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuEventDestroy, [&] { return real(event); }, [&](CUresult) {
    return ObjectShape{ObjectKind::kEvent, LifecycleAction::kDestroy, reinterpret_cast<uint64_t>(event)};
  });
}

PROFLAUNCH_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) { return pc::event_record(false, e, s); }
PROFLAUNCH_EXPORT CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { return pc::event_record(true, e, s); }
PROFLAUNCH_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int f) {
  return pc::event_record_with_flags(false, e, s, f);
}
PROFLAUNCH_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned int f) {
  return pc::event_record_with_flags(true, e, s, f);
}

PROFLAUNCH_EXPORT CUresult cuCtxCreate_v4(CUcontext* context, CUctxCreateParams* params,
                                          unsigned int flags, CUdevice device) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuCtxCreate_v4, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuCtxCreate, [&] { return real(context, params, flags, device); },
                       [&](CUresult r) {
                         return ObjectShape{ObjectKind::kContext, LifecycleAction::kCreate,
                                            handle_of(r, context), 0, flags, 0, device};
                       });
}

PROFLAUNCH_EXPORT CUresult cuCtxDestroy_v2(CUcontext context) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuCtxDestroy_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const bool profiled = !proflaunch::inside_profiler();
  if (profiled) gpu_timing().before_context_teardown(context);
  const CUresult result = traced_object(Api::cuCtxDestroy, [&] { return real(context); }, [&](CUresult) {
    return ObjectShape{ObjectKind::kContext, LifecycleAction::kDestroy, reinterpret_cast<uint64_t>(context)};
  });
  if (profiled) gpu_timing().after_context_teardown(context, result == CUDA_SUCCESS);
  return result;
}

PROFLAUNCH_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuDevicePrimaryCtxRetain, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = traced_object(
      Api::cuDevicePrimaryCtxRetain, [&] { return real(context, device); }, [&](CUresult r) {
        return ObjectShape{ObjectKind::kContext, LifecycleAction::kCreate, handle_of(r, context), 0, 0, 0,
                           device};
      });
  if (result == CUDA_SUCCESS && context != nullptr && device >= 0 && device < kMaxDevices)
    __atomic_store_n(&g_primary_context[device], *context, __ATOMIC_RELEASE);
  return result;
}

PROFLAUNCH_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuDevicePrimaryCtxRelease_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return primary_context_teardown(device, false, [&] {
    return traced_object(Api::cuDevicePrimaryCtxRelease, [&] { return real(device); }, [&](CUresult) {
      return ObjectShape{ObjectKind::kContext, LifecycleAction::kDestroy, 0, 0, 0, 0, device};
    });
  });
}

PROFLAUNCH_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice device) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuDevicePrimaryCtxReset_v2, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return primary_context_teardown(device, true, [&] {
    return traced_object(Api::cuDevicePrimaryCtxReset, [&] { return real(device); }, [&](CUresult) {
      return ObjectShape{ObjectKind::kContext, LifecycleAction::kDestroy, 0, 0, 0, 0, device};
    });
  });
}

PROFLAUNCH_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuModuleLoadData, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuModuleLoadData, [&] { return real(module, image); }, [&](CUresult r) {
    return ObjectShape{ObjectKind::kModule, LifecycleAction::kCreate, handle_of(r, module)};
  });
}

PROFLAUNCH_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int count,
                                              CUjit_option* options, void** values) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuModuleLoadDataEx, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuModuleLoadDataEx, [&] { return real(module, image, count, options, values); },
                       [&](CUresult r) {
                         return ObjectShape{ObjectKind::kModule, LifecycleAction::kCreate, handle_of(r, module)};
                       });
}

PROFLAUNCH_EXPORT CUresult cuModuleLoadFatBinary(CUmodule* module, const void* image) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuModuleLoadFatBinary, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuModuleLoadFatBinary, [&] { return real(module, image); }, [&](CUresult r) {
    return ObjectShape{ObjectKind::kModule, LifecycleAction::kCreate, handle_of(r, module)};
  });
}

PROFLAUNCH_EXPORT CUresult cuModuleUnload(CUmodule module) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuModuleUnload, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuModuleUnload, [&] { return real(module); }, [&](CUresult) {
    return ObjectShape{ObjectKind::kModule, LifecycleAction::kDestroy, reinterpret_cast<uint64_t>(module)};
  });
}

PROFLAUNCH_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuModuleGetFunction, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(function, module, name);
  name_if_created(result, function ? *function : nullptr, name);
  return result;
}

PROFLAUNCH_EXPORT CUresult cuLibraryLoadData(CUlibrary* library, const void* code, CUjit_option* jit_options,
                                             void** jit_values, unsigned int jit_count,
                                             CUlibraryOption* library_options, void** library_values,
                                             unsigned int library_count) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuLibraryLoadData, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(
      Api::cuLibraryLoadData,
      [&] {
        return real(library, code, jit_options, jit_values, jit_count, library_options, library_values,
                    library_count);
      },
      [&](CUresult r) {
        return ObjectShape{ObjectKind::kLibrary, LifecycleAction::kCreate, handle_of(r, library)};
      });
}

PROFLAUNCH_EXPORT CUresult cuLibraryUnload(CUlibrary library) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuLibraryUnload, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  return traced_object(Api::cuLibraryUnload, [&] { return real(library); }, [&](CUresult) {
    return ObjectShape{ObjectKind::kLibrary, LifecycleAction::kDestroy, reinterpret_cast<uint64_t>(library)};
  });
}

PROFLAUNCH_EXPORT CUresult cuLibraryGetKernel(CUkernel* kernel, CUlibrary library, const char* name) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuLibraryGetKernel, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(kernel, library, name);
  name_if_created(result, kernel ? *kernel : nullptr, name);
  return result;
}

PROFLAUNCH_EXPORT CUresult cuKernelGetFunction(CUfunction* function, CUkernel kernel) {
  using namespace pc;
  auto* real = PROFLAUNCH_REAL(cuKernelGetFunction, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const CUresult result = real(function, kernel);
  if (result == CUDA_SUCCESS && function != nullptr && !proflaunch::inside_profiler()) {
    // Named like its kernel: ask the driver, which knows both.
    const char* name = nullptr;
    const DriverServices& driver = driver_services();
    if (driver.kernel_get_name != nullptr) driver.kernel_get_name(&name, kernel);
    if (name == nullptr && driver.func_get_name != nullptr) driver.func_get_name(&name, *function);
    name_if_created(result, *function, name);
  }
  return result;
}

}  // extern "C"

namespace proflaunch::cuda {

HookFamily object_hooks() {
  // clang-format off
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuStreamCreate, "cuStreamCreate", 2000, false, kDriverLibrary, real_cuStreamCreate),
      PROFLAUNCH_HOOK(cuStreamCreateWithPriority, "cuStreamCreateWithPriority", 5050, false, kDriverLibrary, real_cuStreamCreateWithPriority),
      PROFLAUNCH_HOOK(cuStreamDestroy_v2, "cuStreamDestroy", 4000, false, kDriverLibrary, real_cuStreamDestroy_v2),
      PROFLAUNCH_HOOK(cuEventCreate, "cuEventCreate", 2000, false, kDriverLibrary, real_cuEventCreate),
      PROFLAUNCH_HOOK(cuEventDestroy_v2, "cuEventDestroy", 4000, false, kDriverLibrary, real_cuEventDestroy_v2),
      PROFLAUNCH_HOOK(cuEventRecord, "cuEventRecord", 2000, false, kDriverLibrary, real_cuEventRecord),
      PROFLAUNCH_HOOK(cuEventRecord_ptsz, "cuEventRecord", 7000, true, kDriverLibrary, real_cuEventRecord_ptsz),
      PROFLAUNCH_HOOK(cuEventRecordWithFlags, "cuEventRecordWithFlags", 11010, false, kDriverLibrary, real_cuEventRecordWithFlags),
      PROFLAUNCH_HOOK(cuEventRecordWithFlags_ptsz, "cuEventRecordWithFlags", 11010, true, kDriverLibrary, real_cuEventRecordWithFlags_ptsz),
      PROFLAUNCH_HOOK(cuCtxCreate_v4, "cuCtxCreate", 12050, false, kDriverLibrary, real_cuCtxCreate_v4),
      PROFLAUNCH_HOOK(cuCtxDestroy_v2, "cuCtxDestroy", 4000, false, kDriverLibrary, real_cuCtxDestroy_v2),
      PROFLAUNCH_HOOK(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, false, kDriverLibrary, real_cuDevicePrimaryCtxRetain),
      PROFLAUNCH_HOOK(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease", 11000, false, kDriverLibrary, real_cuDevicePrimaryCtxRelease_v2),
      PROFLAUNCH_HOOK(cuDevicePrimaryCtxReset_v2, "cuDevicePrimaryCtxReset", 11000, false, kDriverLibrary, real_cuDevicePrimaryCtxReset_v2),
      PROFLAUNCH_HOOK(cuModuleLoadData, "cuModuleLoadData", 2000, false, kDriverLibrary, real_cuModuleLoadData),
      PROFLAUNCH_HOOK(cuModuleLoadDataEx, "cuModuleLoadDataEx", 2010, false, kDriverLibrary, real_cuModuleLoadDataEx),
      PROFLAUNCH_HOOK(cuModuleLoadFatBinary, "cuModuleLoadFatBinary", 2000, false, kDriverLibrary, real_cuModuleLoadFatBinary),
      PROFLAUNCH_HOOK(cuModuleUnload, "cuModuleUnload", 2000, false, kDriverLibrary, real_cuModuleUnload),
      PROFLAUNCH_HOOK(cuModuleGetFunction, "cuModuleGetFunction", 2000, false, kDriverLibrary, real_cuModuleGetFunction),
      PROFLAUNCH_HOOK(cuLibraryLoadData, "cuLibraryLoadData", 12000, false, kDriverLibrary, real_cuLibraryLoadData),
      PROFLAUNCH_HOOK(cuLibraryUnload, "cuLibraryUnload", 12000, false, kDriverLibrary, real_cuLibraryUnload),
      PROFLAUNCH_HOOK(cuLibraryGetKernel, "cuLibraryGetKernel", 12000, false, kDriverLibrary, real_cuLibraryGetKernel),
      PROFLAUNCH_HOOK(cuKernelGetFunction, "cuKernelGetFunction", 12000, false, kDriverLibrary, real_cuKernelGetFunction),
  };
  // clang-format on
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
