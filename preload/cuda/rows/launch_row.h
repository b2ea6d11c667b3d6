// Kernel launches (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel
// and the legacy forms, with their per-thread variants; the runtime's
// launches arrive here through the pointers cuGetProcAddress handed it), and
// host functions queued on a stream (cuLaunchHostFunc, cuStreamAddCallback),
// which are GPU-stream work with a duration of their own. The family is
// HIP's launches too (hip/hip_rows.h): LaunchRowOf<HipVendor>.
#pragma once

#include "preload/cuda/rows/cuda_vendor.h"
#include "preload/cuda/rows/row_support.h"

namespace proflaunch::cuda {

template <typename Vendor>
struct LaunchRowOf {
  uint64_t function;  // CUfunction, a HIP host stub or hipFunction_t, or a host function's address
  format::Dim3 grid;
  format::Dim3 block;
  uint32_t shared_bytes;
  typename Vendor::Stream stream;
  uint32_t launch_flags;  // format::LaunchFlags

  bool host_function() const noexcept { return (launch_flags & format::kLaunchHostFunction) != 0; }

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost()) return call_real();
    Vendor::launch_seen(describe);
    if (!Vendor::recording()) return call_real();
    LaunchRowOf row = describe();
    if (row.host_function()) row.function = Vendor::host_function_passed(row.function);
    Vendor::name_launch(row.function, row.host_function());
    typename Vendor::StreamOperation operation(Hook::api,
                                               row.host_function() ? Operation::kHostFunction : Operation::kLaunch,
                                               Hook::per_thread, /*async=*/true, Submission::kAsynchronous, row.stream);
    const format::GpuActivityKind kind =
        row.host_function() ? format::GpuActivityKind::kHostFunction : format::GpuActivityKind::kKernel;
    return submit<format::KernelLaunchRecord>(operation, call_real, kind,
                                              [&](format::KernelLaunchRecord& record) { row.fill(record); });
  }

  void fill(format::KernelLaunchRecord& record) const noexcept {
    record.function = function;
    record.grid = grid;
    record.block = block;
    record.dynamic_shared_bytes = shared_bytes;
    record.launch_flags = launch_flags;
  }
};
using LaunchRow = LaunchRowOf<CudaVendor>;

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
