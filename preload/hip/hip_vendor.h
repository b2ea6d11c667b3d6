// The HIP side of the row families (preload/cuda/rows/cuda_vendor.h lists
// what a vendor provides, and is CUDA's): HIP's types, and where HIP's
// recording differs from CUDA's.
//  - Allocations are followed when either the cuda or the memory domain is
//    traced (HIP's hooks are all "cuda" hooks otherwise).
//  - No call made by another API on its behalf is counted (HIP has no
//    runtime-over-driver layering).
//  - Devices are AMD ones (kAmdDeviceBase + ordinal); there are no contexts.
//  - Launches teach nothing before they are recorded: kernels are named
//    when registered (__hipRegisterFunction, hipModuleGetFunction).
//  - A synchronous copy returns once it is done; a synchronous memset does
//    not wait.
//  - Stream waits take no submission lock; allocations are not checked for
//    stream capture, and the shim asks HIP nothing about memory pools (a
//    pool's reserved bytes are unknown).
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/config.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/recording.h"
#include "preload/hip/hip_headers.h"
#include "preload/hip/hip_services.h"
#include "preload/hip/hip_stream_operation.h"
#include "preload/intercept/hook_registry.h"
#include "preload/state/runtime_state.h"

namespace proflaunch::hip {

// Where a pointer lives, from the runtime's own attributes (an address it
// does not know is pageable host memory, as HIP says).
struct HipMemoryEnd {
  uint64_t address = 0;
  format::MemoryKind kind = format::MemoryKind::kUnknown;
  int32_t device = -1;
};

// Fills kind and device (hipPointerGetAttributes; a failure never reaches
// the program's last error).
void classify(HipMemoryEnd& end) noexcept;

struct HipVendor {
  using Result = hipError_t;
  using Stream = hipStream_t;
  using Context = void*;     // none: always null
  using MemoryPool = void*;  // never asked: always null
  using MemoryEnd = HipMemoryEnd;
  using StreamOperation = HipStreamOperation;
  static constexpr Result kSuccess = hipSuccess;

  static bool recording() noexcept { return cuda::cuda_domain_recording(); }
  static bool memory_active() noexcept {
    return runtime::active() && (trace_domains() & (kTraceCuda | kTraceMemory)) != 0;
  }
  static bool counts(uint16_t api) noexcept { return hooks::counted_api(api); }

  // The calling thread's HIP device (an ordinal: recorded_device() names it).
  struct Place {
    int device = 0;
    void* context = nullptr;
  };
  static Place current_place() noexcept { return {current_device(), nullptr}; }
  static int32_t recorded_device(const Place& place) noexcept { return hip::recorded_device(place.device); }
  static uint64_t stream_id(hipStream_t stream, bool per_thread) noexcept { return hip::stream_id(stream, per_thread); }
  static hipStream_t runs_on(hipStream_t stream, bool per_thread) noexcept { return hip::runs_on(stream, per_thread); }

  template <typename Describe>
  static void launch_seen(Describe&) noexcept {}
  static uint64_t host_function_passed(uint64_t function) noexcept { return function; }
  // Kernels are named where they are registered or looked up (hip_rows.h);
  // a host function (hipStreamAddCallback) as CUDA's are: a FunctionDef with
  // its exported symbol or module+offset, for traces converted where neither
  // the symbol table nor the program's files name it.
  static void name_launch(uint64_t function, bool host_function) noexcept {
    if (host_function) cuda::ensure_host_function_named(function);
  }

  static void classify(HipMemoryEnd& end) noexcept { hip::classify(end); }
  static cuda::Submission copy_submission(bool async, const HipMemoryEnd&, const HipMemoryEnd&) noexcept {
    return async ? cuda::Submission::kAsynchronous : cuda::Submission::kSynchronous;
  }
  static bool copy_done_by_return(bool async, const HipMemoryEnd&, const HipMemoryEnd&) noexcept { return !async; }
  static bool memset_done_by_return(bool, const HipMemoryEnd&) noexcept { return false; }

  struct SubmissionLock {
    SubmissionLock(const Place&, bool, hipStream_t) noexcept {}
    void release() noexcept {}
  };

  static bool captures_may_be_open() noexcept { return false; }
  static bool stream_may_be_capturing(hipStream_t) noexcept { return false; }
  struct RelaxedCaptureScope {
    explicit RelaxedCaptureScope(bool) noexcept {}
  };
  static void record_captured_node(uint64_t, hipStream_t) noexcept {}

  static void* pool_of_address(uint64_t) noexcept { return nullptr; }
  static void* current_pool_of_device(int) noexcept { return nullptr; }
  static uint64_t pool_reserved_bytes(void*) noexcept { return format::kPoolReservedUnknown; }
};

}  // namespace proflaunch::hip
