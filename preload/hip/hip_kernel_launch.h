// HIP kernel launches timed inside their own dispatch (issue 37).
//
// Events recorded on a stream around a launch measure from when the stream
// reaches the start event; on an idle stream that is at once, before the
// launch call has even loaded the kernel's code object (milliseconds on a
// first launch) and submitted it. HIP's extended launches take a start and
// a stop event that belong to the kernel's dispatch. So a launch the
// program makes with hipLaunchKernel(_spt) (<<<>>> reaches it through
// __hipPopCallConfiguration), hipModuleLaunchKernel, or an extended launch
// without events of its own is made by the shim as the extended launch of
// the same kernel, configuration, arguments and stream with the shim's two
// events. On HIP 5.2 both entry points end in the same internal launch
// (ihipLaunchKernel, ihipModuleLaunchKernel): what the launch does, returns
// and leaves as the thread's last error is the program's call's.
//
// The program's own call is made, with bracketing events, when that cannot
// be done without changing it: the runtime lacks the extended entry point;
// the program passed events of its own (a dispatch has one start and one
// stop slot); a cooperative launch (no extended form); a capturing stream
// (HIP 5.2's hipExtLaunchKernel does not capture); a module configuration
// that hipModuleLaunchKernel itself rejects before launching (its work
// sizes overflow 32 bits, or grids beyond the limits newer runtimes check).
#pragma once

#include <cstdint>

#include "formats/records.h"
#include "preload/cuda/rows/launch_row.h"
#include "preload/hip/hip_services.h"
#include "preload/hip/hip_stream_operation.h"
#include "preload/hip/hip_vendor.h"

namespace proflaunch::hip {

// The extended launch that does what the program's launch call does.
struct HipDispatchLaunch {
  enum class Entry : uint8_t { kNone, kRegistered, kModule };
  Entry entry = Entry::kNone;
  const void* function = nullptr;  // the host stub (kRegistered) or the hipFunction_t (kModule)
  dim3 grid{};                     // kRegistered: blocks
  dim3 block{};
  uint32_t global[3] = {0, 0, 0};  // kModule: work items
  uint32_t local[3] = {0, 0, 0};
  void** args = nullptr;
  void** extra = nullptr;  // kModule
  size_t shared_bytes = 0;
  uint32_t flags = 0;

  bool possible() const noexcept {
    const HipServices& hip = hip_services();
    return (entry == Entry::kRegistered && hip.ext_launch_kernel != nullptr) ||
           (entry == Entry::kModule && hip.ext_module_launch_kernel != nullptr);
  }

  hipError_t launch(hipStream_t stream, hipEvent_t start, hipEvent_t stop) const noexcept {
    const HipServices& hip = hip_services();
    if (entry == Entry::kRegistered)
      return hip.ext_launch_kernel(function, grid, block, args, shared_bytes, stream, start, stop,
                                   static_cast<int>(flags));
    return hip.ext_module_launch_kernel(static_cast<hipFunction_t>(const_cast<void*>(function)), global[0], global[1],
                                        global[2], local[0], local[1], local[2], shared_bytes, stream, args, extra,
                                        start, stop, flags);
  }
};

struct HipKernelLaunchRow {
  cuda::LaunchRowOf<HipVendor> row;
  HipDispatchLaunch dispatch;
  bool module_function;  // row.function is a hipFunction_t, not a host stub

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !HipVendor::recording()) return call_real();
    const HipKernelLaunchRow launch = describe();
    HipStreamOperation operation(Hook::api, cuda::Operation::kLaunch, Hook::per_thread, /*async=*/true,
                                 cuda::Submission::kAsynchronous, launch.row.stream, false,
                                 launch.dispatch.possible());
    auto launch_now = [&]() -> hipError_t {
      if (operation.dispatch_start() == nullptr) return call_real();
      return launch.dispatch.launch(runs_on(launch.row.stream, Hook::per_thread), operation.dispatch_start(),
                                    operation.dispatch_stop());
    };
    const hipError_t result = cuda::submit<format::KernelLaunchRecord>(
        operation, launch_now, format::GpuActivityKind::kKernel,
        [&](format::KernelLaunchRecord& record) { launch.row.fill(record); });
    if (result == hipSuccess)
      describe_function_resources(launch.row.function, launch.module_function);
    return result;
  }
};

namespace rows {

// hipLaunchKernel(_spt) and <<<>>>: the registered kernel of a host stub.
inline HipKernelLaunchRow kernel_launch(const void* function, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                                        hipStream_t stream) noexcept {
  HipKernelLaunchRow launch{{reinterpret_cast<uint64_t>(function), {grid.x, grid.y, grid.z},
                             {block.x, block.y, block.z}, static_cast<uint32_t>(shared_bytes), stream, 0},
                            {},
                            false};
  launch.dispatch.entry = HipDispatchLaunch::Entry::kRegistered;
  launch.dispatch.function = function;
  launch.dispatch.grid = grid;
  launch.dispatch.block = block;
  launch.dispatch.args = args;
  launch.dispatch.shared_bytes = shared_bytes;
  return launch;
}

// hipExtLaunchKernel: its own events, if it has any, stay and are the only ones.
inline HipKernelLaunchRow ext_kernel_launch(const void* function, dim3 grid, dim3 block, void** args,
                                            size_t shared_bytes, hipStream_t stream, hipEvent_t start,
                                            hipEvent_t stop, int flags) noexcept {
  HipKernelLaunchRow launch = kernel_launch(function, grid, block, args, shared_bytes, stream);
  launch.row.launch_flags = format::kLaunchExtended;
  launch.dispatch.flags = static_cast<uint32_t>(flags);
  if (start != nullptr || stop != nullptr) launch.dispatch.entry = HipDispatchLaunch::Entry::kNone;
  return launch;
}

// hipExtModuleLaunchKernel, hipHccModuleLaunchKernel: work sizes in work items.
inline HipKernelLaunchRow work_size_kernel_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                                  uint32_t ly, uint32_t lz, size_t shared_bytes, hipStream_t stream,
                                                  void** params, void** extra, hipEvent_t start, hipEvent_t stop,
                                                  uint32_t flags = 0) noexcept {
  auto blocks = [](uint32_t global, uint32_t local) { return local == 0 ? 0u : (global + local - 1) / local; };
  HipKernelLaunchRow launch{{reinterpret_cast<uint64_t>(f), {blocks(gx, lx), blocks(gy, ly), blocks(gz, lz)},
                             {lx, ly, lz}, static_cast<uint32_t>(shared_bytes), stream, format::kLaunchExtended},
                            {},
                            true};
  if (start != nullptr || stop != nullptr) return launch;
  HipDispatchLaunch& d = launch.dispatch;
  d.entry = HipDispatchLaunch::Entry::kModule;
  d.function = f;
  d.global[0] = gx, d.global[1] = gy, d.global[2] = gz;
  d.local[0] = lx, d.local[1] = ly, d.local[2] = lz;
  d.args = params;
  d.extra = extra;
  d.shared_bytes = shared_bytes;
  d.flags = flags;
  return launch;
}

// hipModuleLaunchKernel: grids in blocks. hipModuleLaunchKernel turns them
// into work items, rejecting sizes beyond 32 bits (and, in newer runtimes,
// grids beyond 2^31-1 x 65536 x 65536) with errors the extended launch would
// not give: those calls are left to it.
inline HipKernelLaunchRow module_kernel_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
                                               uint32_t by, uint32_t bz, uint32_t shared_bytes, hipStream_t stream,
                                               void** params, void** extra) noexcept {
  HipKernelLaunchRow launch{
      {reinterpret_cast<uint64_t>(f), {gx, gy, gz}, {bx, by, bz}, shared_bytes, stream, 0}, {}, true};
  const uint64_t global[3] = {uint64_t(gx) * bx, uint64_t(gy) * by, uint64_t(gz) * bz};
  if (gx > 0x7fffffffu || gy > 65536 || gz > 65536 || global[0] > UINT32_MAX || global[1] > UINT32_MAX ||
      global[2] > UINT32_MAX)
    return launch;
  HipDispatchLaunch& d = launch.dispatch;
  d.entry = HipDispatchLaunch::Entry::kModule;
  d.function = f;
  for (int i = 0; i < 3; ++i) d.global[i] = static_cast<uint32_t>(global[i]);
  d.local[0] = bx, d.local[1] = by, d.local[2] = bz;
  d.args = params;
  d.extra = extra;
  d.shared_bytes = shared_bytes;
  return launch;
}

}  // namespace rows
}  // namespace proflaunch::hip
