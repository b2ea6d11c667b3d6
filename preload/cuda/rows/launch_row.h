// Kernel launches (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel
// and the legacy forms, with their per-thread variants; the runtime's
// launches arrive here through the pointers cuGetProcAddress handed it), and
// host functions queued on a stream (cuLaunchHostFunc, cuStreamAddCallback),
// which are GPU-stream work with a duration of their own.
#pragma once

#include "preload/control/capture_control.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/cuda/stream_operation.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

struct LaunchRow {
  uint64_t function;  // CUfunction, or a host function's address
  format::Dim3 grid;
  format::Dim3 block;
  uint32_t shared_bytes;
  CUstream stream;
  uint32_t launch_flags;  // format::LaunchFlags

  bool host_function() const noexcept { return (launch_flags & format::kLaunchHostFunction) != 0; }

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost()) return call_real();
    // --step-range=kernel:NAME: a launch of the step kernel is a step
    // boundary, seen before the launch is (or is not) recorded.
    if (__builtin_expect(capture::armed(capture::kArmedKernelStep), 0)) {
      const LaunchRow row = describe();
      if (!row.host_function() && is_step_kernel(row.function)) capture::kernel_step();
    }
    if (!cuda_domain_recording()) return call_real();
    const LaunchRow row = describe();
    if (row.host_function()) ensure_host_function_named(row.function);
    else ensure_function_named(row.function);
    StreamOperation operation(Hook::api, row.host_function() ? Operation::kHostFunction : Operation::kLaunch,
                              Hook::per_thread, /*async=*/true, Submission::kAsynchronous, row.stream);
    const CUresult result = call_real();
    operation.returned(result);
    if (auto* record = emit<format::KernelLaunchRecord>()) {
      operation.finish(*record, result);
      record->function = row.function;
      record->grid = row.grid;
      record->block = row.block;
      record->dynamic_shared_bytes = row.shared_bytes;
      record->launch_flags = row.launch_flags;
      commit();
      stacks::attach_stacks(operation.correlation(), format::StackPoint::kLaunch);
    }
    operation.queue(row.host_function() ? format::GpuActivityKind::kHostFunction : format::GpuActivityKind::kKernel);
    return result;
  }
};

namespace rows {

inline LaunchRow launch(CUfunction f, format::Dim3 grid, format::Dim3 block, unsigned shared_bytes, CUstream stream,
                        uint32_t flags = 0) noexcept {
  return {reinterpret_cast<uint64_t>(f), grid, block, shared_bytes, stream, flags};
}

// An invalid config is the driver's to reject; the row records what it can read.
inline LaunchRow launch_ex(const CUlaunchConfig* config, CUfunction f) noexcept {
  LaunchRow row{reinterpret_cast<uint64_t>(f), {}, {}, 0, nullptr, format::kLaunchExtended};
  if (config == nullptr) return row;
  row.grid = {config->gridDimX, config->gridDimY, config->gridDimZ};
  row.block = {config->blockDimX, config->blockDimY, config->blockDimZ};
  row.shared_bytes = config->sharedMemBytes;
  row.stream = config->hStream;
  for (unsigned i = 0; config->attrs != nullptr && i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && config->attrs[i].value.cooperative)
      row.launch_flags |= format::kLaunchCooperative;
  }
  return row;
}

template <typename HostFunction>
inline LaunchRow host_function(HostFunction function, CUstream stream) noexcept {
  return {reinterpret_cast<uint64_t>(function), {}, {}, 0, stream, format::kLaunchHostFunction};
}

}  // namespace rows
}  // namespace proflaunch::cuda
