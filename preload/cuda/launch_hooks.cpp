// Kernel launches: cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel
// and their per-thread-default-stream variants. The runtime's launches
// (cudaLaunchKernel, <<<>>> stubs) arrive here too, through the pointers
// cuGetProcAddress handed the runtime.
#include <cuda.h>

#include "preload/cuda/api_call.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/hook_registry.h"
#include "preload/cuda/recording.h"
#include "preload/cuda/stream_operation.h"
#include "preload/stacks/stacks.h"

extern "C" {
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig*, CUfunction, void**, void**);
CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void**);
}

namespace proflaunch::cuda {
namespace {

void* real_cuLaunchKernel;
void* real_cuLaunchKernel_ptsz;
void* real_cuLaunchKernelEx;
void* real_cuLaunchKernelEx_ptsz;
void* real_cuLaunchCooperativeKernel;
void* real_cuLaunchCooperativeKernel_ptsz;

struct LaunchShape {
  CUfunction function;
  format::Dim3 grid;
  format::Dim3 block;
  uint32_t shared_bytes;
  CUstream stream;
  uint32_t launch_flags;
};

template <typename CallReal>
CUresult traced_launch(Api api, bool per_thread, const LaunchShape& shape, CallReal&& call_real) {
  ReentrancyGuard guard;
  if (!guard.outermost() || !cuda_domain_recording()) return call_real();
  const auto function = reinterpret_cast<uint64_t>(shape.function);
  ensure_function_named(function);
  StreamOperation operation(api, Operation::kLaunch, per_thread, /*async=*/true, shape.stream);
  const CUresult result = call_real();
  if (auto* record = emit<format::KernelLaunchRecord>()) {
    operation.finish(*record, result);
    record->function = function;
    record->grid = shape.grid;
    record->block = shape.block;
    record->dynamic_shared_bytes = shape.shared_bytes;
    record->launch_flags = shape.launch_flags;
    const uint64_t correlation = record->span.correlation_id;
    commit();
    stacks::attach_stacks(correlation, format::StackPoint::kLaunch);
  }
  operation.submitted(format::GpuActivityKind::kKernel, result);
  return result;
}

CUresult launch_kernel(bool per_thread, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes, CUstream stream,
                       void** params, void** extra) {
  auto* real = per_thread ? PROFLAUNCH_REAL(cuLaunchKernel_ptsz, kDriverLibrary)
                          : PROFLAUNCH_REAL(cuLaunchKernel, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const LaunchShape shape{f, {gx, gy, gz}, {bx, by, bz}, shared_bytes, stream, 0};
  return traced_launch(Api::cuLaunchKernel, per_thread, shape, [&] {
    return real(f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params, extra);
  });
}

uint32_t launch_config_flags(const CUlaunchConfig* config) {
  uint32_t flags = format::kLaunchExtended;
  for (unsigned i = 0; config != nullptr && config->attrs != nullptr && i < config->numAttrs; ++i) {
    if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && config->attrs[i].value.cooperative)
      flags |= format::kLaunchCooperative;
  }
  return flags;
}

CUresult launch_kernel_ex(bool per_thread, const CUlaunchConfig* config, CUfunction f,
                          void** params, void** extra) {
  auto* real = per_thread ? PROFLAUNCH_REAL(cuLaunchKernelEx_ptsz, kDriverLibrary)
                          : PROFLAUNCH_REAL(cuLaunchKernelEx, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  // An invalid config is the driver's to reject; record what can be read.
  LaunchShape shape{f, {}, {}, 0, nullptr, launch_config_flags(config)};
  if (config != nullptr) {
    shape.grid = {config->gridDimX, config->gridDimY, config->gridDimZ};
    shape.block = {config->blockDimX, config->blockDimY, config->blockDimZ};
    shape.shared_bytes = config->sharedMemBytes;
    shape.stream = config->hStream;
  }
  return traced_launch(Api::cuLaunchKernelEx, per_thread, shape,
                       [&] { return real(config, f, params, extra); });
}

CUresult launch_cooperative(bool per_thread, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz, unsigned shared_bytes,
                            CUstream stream, void** params) {
  auto* real = per_thread ? PROFLAUNCH_REAL(cuLaunchCooperativeKernel_ptsz, kDriverLibrary)
                          : PROFLAUNCH_REAL(cuLaunchCooperativeKernel, kDriverLibrary);
  if (real == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
  const LaunchShape shape{f, {gx, gy, gz}, {bx, by, bz}, shared_bytes, stream,
                          format::kLaunchCooperative};
  return traced_launch(Api::cuLaunchCooperativeKernel, per_thread, shape, [&] {
    return real(f, gx, gy, gz, bx, by, bz, shared_bytes, stream, params);
  });
}

}  // namespace
}  // namespace proflaunch::cuda

using proflaunch::cuda::launch_cooperative;
using proflaunch::cuda::launch_kernel;
using proflaunch::cuda::launch_kernel_ex;

extern "C" {

PROFLAUNCH_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                          unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                          CUstream stream, void** params, void** extra) {
  return launch_kernel(false, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

PROFLAUNCH_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                               unsigned bx, unsigned by, unsigned bz,
                                               unsigned shmem, CUstream stream, void** params,
                                               void** extra) {
  return launch_kernel(true, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

PROFLAUNCH_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f,
                                            void** params, void** extra) {
  return launch_kernel_ex(false, config, f, params, extra);
}

PROFLAUNCH_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f,
                                                 void** params, void** extra) {
  return launch_kernel_ex(true, config, f, params, extra);
}

PROFLAUNCH_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy,
                                                     unsigned gz, unsigned bx, unsigned by,
                                                     unsigned bz, unsigned shmem, CUstream stream,
                                                     void** params) {
  return launch_cooperative(false, f, gx, gy, gz, bx, by, bz, shmem, stream, params);
}

PROFLAUNCH_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                                                          unsigned gz, unsigned bx, unsigned by,
                                                          unsigned bz, unsigned shmem,
                                                          CUstream stream, void** params) {
  return launch_cooperative(true, f, gx, gy, gz, bx, by, bz, shmem, stream, params);
}

}  // extern "C"

namespace proflaunch::cuda {

HookFamily launch_hooks() {
  static const intercept::HookEntry kHooks[] = {
      PROFLAUNCH_HOOK(cuLaunchKernel, "cuLaunchKernel", 4000, false, kDriverLibrary, real_cuLaunchKernel),
      PROFLAUNCH_HOOK(cuLaunchKernel_ptsz, "cuLaunchKernel", 7000, true, kDriverLibrary, real_cuLaunchKernel_ptsz),
      PROFLAUNCH_HOOK(cuLaunchKernelEx, "cuLaunchKernelEx", 11060, false, kDriverLibrary, real_cuLaunchKernelEx),
      PROFLAUNCH_HOOK(cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", 11060, true, kDriverLibrary, real_cuLaunchKernelEx_ptsz),
      PROFLAUNCH_HOOK(cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", 9000, false, kDriverLibrary, real_cuLaunchCooperativeKernel),
      PROFLAUNCH_HOOK(cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel", 9000, true, kDriverLibrary, real_cuLaunchCooperativeKernel_ptsz),
  };
  return {kHooks, std::size(kHooks)};
}

}  // namespace proflaunch::cuda
