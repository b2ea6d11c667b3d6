// Kernel launches. Kernels cannot compute here: a launch is validated like the
// real driver does, then occupies its stream for the modelled duration of
// kernel_cost.h (fixed + per-wave cost, waves = ceil(blocks / SM count)).
#include "api_guard.h"
#include "context.h"
#include "device_telemetry.h"
#include "driver_state.h"
#include "event.h"
#include "kernel_cost.h"
#include "capture.h"
#include "kernel_limits.h"
#include "module.h"

using namespace simgpu;

namespace {

struct Dimensions {
  unsigned x = 1, y = 1, z = 1;
  uint64_t product() const { return uint64_t(x) * y * z; }
};

struct Launch {
  CUfunction function = nullptr;
  Dimensions grid, block;
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  void** parameters = nullptr;
  void** extra = nullptr;
  bool cooperative = false;
  Dimensions cluster;
  // Events bound to the dispatch itself (HIP's extended launches): the start
  // event refers to the kernel's start, the stop event to its end.
  CUevent start_event = nullptr;
  CUevent stop_event = nullptr;
};

constexpr unsigned kMaxGridX = 0x7fffffffu;
constexpr unsigned kMaxGridYZ = 65535;
constexpr int kMaxExtraEntries = 64;
constexpr uint64_t kMaxPortableClusterBlocks = 8;

// CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE pairs terminated by CU_LAUNCH_PARAM_END.
bool extra_is_well_formed(void** extra) {
  bool has_buffer = false, has_size = false;
  for (int i = 0; i < kMaxExtraEntries; i += 2) {
    if (extra[i] == CU_LAUNCH_PARAM_END) return !has_buffer || has_size;
    if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
      has_buffer = true;
    } else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
      has_size = true;
    } else {
      return false;
    }
  }
  return false;
}

CUresult check_launch(const Launch& launch, CUfunc_st*& function) {
  function = as_function(launch.function);
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  const Dimensions& g = launch.grid;
  const Dimensions& b = launch.block;
  if (!g.x || !g.y || !g.z || g.x > kMaxGridX || g.y > kMaxGridYZ || g.z > kMaxGridYZ) return CUDA_ERROR_INVALID_VALUE;
  if (!b.x || !b.y || !b.z || b.x > 1024 || b.y > 1024 || b.z > 64 || b.product() > kMaxThreadsPerBlock) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (b.product() > uint64_t(max_threads_per_block(*function))) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  {
    std::lock_guard lock(function->mutex);
    if (launch.shared_bytes >
        unsigned(function->settable_attributes[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES])) {
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  if (launch.parameters && launch.extra) return CUDA_ERROR_INVALID_VALUE;
  if (launch.extra && !extra_is_well_formed(launch.extra)) return CUDA_ERROR_INVALID_VALUE;
  if (!launch.parameters && !launch.extra && function->info.parameter_bytes > 0) return CUDA_ERROR_INVALID_VALUE;
  const Dimensions& c = launch.cluster;
  if (g.x % c.x || g.y % c.y || g.z % c.z) return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  if (c.product() > kMaxPortableClusterBlocks) {
    std::lock_guard lock(function->mutex);
    if (!function->settable_attributes[CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED] || c.product() > 16) {
      return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    }
  }
  if (launch.cooperative) {
    const uint64_t resident = uint64_t(active_blocks_per_sm(*function, int(b.product()), launch.shared_bytes)) *
                              uint64_t(state().config.sm_count);
    if (g.product() > resident) return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  }
  return CUDA_SUCCESS;
}

// A completion of `event`'s newest record (as cuEventRecord would set it).
void bind_event(CUevent event, CompletionRef completion) {
  std::lock_guard lock(event->mutex);
  event->recorded = std::move(completion);
}

CUresult launch_kernel(const Launch& launch, NullStream null_means) {
  CUfunc_st* function = nullptr;
  if (CUresult result = check_launch(launch, function); result != CUDA_SUCCESS) return result;
  for (CUevent event : {launch.start_event, launch.stop_event})
    if (event != nullptr && !state().events.contains(event)) return CUDA_ERROR_INVALID_HANDLE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(launch.stream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_capture_submit(stream, false); result != CUDA_SUCCESS) return result;
  if (function->module != nullptr) pay_pending_load(function->module);
  StreamOperation op;
  if (launch.start_event != nullptr) op.started = std::make_shared<Completion>();
  op.duration_ns = kernel_duration_ns(kernel_cost(function->info.name), launch.grid.product(), state().config.sm_count);
  op.node.type = CU_GRAPH_NODE_TYPE_KERNEL;
  op.node.function = launch.function;
  op.node.grid[0] = launch.grid.x;
  op.node.grid[1] = launch.grid.y;
  op.node.grid[2] = launch.grid.z;
  op.node.block[0] = launch.block.x;
  op.node.block[1] = launch.block.y;
  op.node.block[2] = launch.block.z;
  op.node.shared_bytes = launch.shared_bytes;
  CompletionRef started = op.started;
  const CompletionRef completion = submit(stream, std::move(op));
  // Captured work never starts now: both events then refer to the node.
  if (launch.start_event != nullptr) bind_event(launch.start_event, completion->capture_mark ? completion : started);
  if (launch.stop_event != nullptr) bind_event(launch.stop_event, completion);
  // The launch itself succeeds; the fault is reported by the calls after it.
  const std::string& faults = state().config.fault_kernels;
  for (size_t at = 0; at < faults.size();) {
    size_t comma = faults.find(',', at);
    if (comma == std::string::npos) comma = faults.size();
    if (comma > at && function->info.name.find(faults.substr(at, comma - at)) != std::string::npos)
    {
      mark_device_fault();
      if (stream->context != nullptr && stream->context->device != nullptr)
        telemetry_xid(*stream->context->device, 31);  // XID 31: GPU memory page fault
    }
    at = comma + 1;
  }
  return CUDA_SUCCESS;
}

Launch classic_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                      unsigned shared_bytes, CUstream stream, void** parameters, void** extra) {
  Launch launch;
  launch.function = f;
  launch.grid = {gx, gy, gz};
  launch.block = {bx, by, bz};
  launch.shared_bytes = shared_bytes;
  launch.stream = stream;
  launch.parameters = parameters;
  launch.extra = extra;
  return launch;
}

CUresult launch_with_config(const CUlaunchConfig* config, CUfunction f, void** parameters, void** extra,
                            NullStream null_means) {
  if (!config || (config->numAttrs && !config->attrs)) return CUDA_ERROR_INVALID_VALUE;
  Launch launch =
      classic_launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX, config->blockDimY,
                     config->blockDimZ, config->sharedMemBytes, config->hStream, parameters, extra);
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute& attribute = config->attrs[i];
    switch (attribute.id) {
      case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        launch.cooperative = attribute.value.cooperative != 0;
        break;
      case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: {
        const auto& dim = attribute.value.clusterDim;
        if (!dim.x || !dim.y || !dim.z) return CUDA_ERROR_INVALID_VALUE;
        launch.cluster = {dim.x, dim.y, dim.z};
        break;
      }
      case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        if (!valid_access_policy_window(attribute.value.accessPolicyWindow)) return CUDA_ERROR_INVALID_VALUE;
        break;
      default:
        // Scheduling hints (priority, access policy, programmatic launch,
        // memory sync domains...) are accepted and have no simulated effect.
        if (attribute.id < CU_LAUNCH_ATTRIBUTE_IGNORE ||
            attribute.id > CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING) {
          return CUDA_ERROR_INVALID_VALUE;
        }
        break;
    }
  }
  return launch_kernel(launch, null_means);
}

}  // namespace

// The device engine's launch with events bound to the dispatch (engine.h in
// the HIP front end): not a driver entry point.
CUresult simgpu::launch_kernel_with_events(CUfunction f, const unsigned grid[3], const unsigned block[3],
                                           unsigned shared_bytes, CUstream stream, void** parameters, void** extra,
                                           CUevent start_event, CUevent stop_event) {
  return api_call([&] {
    Launch launch = classic_launch(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes, stream,
                                   parameters, extra);
    launch.start_event = start_event;
    launch.stop_event = stop_event;
    return launch_kernel(launch, NullStream::kLegacy);
  });
}

extern "C" {

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return api_call([&] {
    return launch_kernel(classic_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                        sharedMemBytes, hStream, kernelParams, extra),
                         NullStream::kLegacy);
  });
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
  return api_call([&] {
    return launch_kernel(classic_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                                        sharedMemBytes, hStream, kernelParams, extra),
                         NullStream::kPerThread);
  });
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  return api_call([&] { return launch_with_config(config, f, kernelParams, extra, NullStream::kLegacy); });
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra) {
  return api_call([&] { return launch_with_config(config, f, kernelParams, extra, NullStream::kPerThread); });
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void** kernelParams) {
  return api_call([&] {
    Launch launch = classic_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                   hStream, kernelParams, nullptr);
    launch.cooperative = true;
    return launch_kernel(launch, NullStream::kLegacy);
  });
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                                void** kernelParams) {
  return api_call([&] {
    Launch launch = classic_launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes,
                                   hStream, kernelParams, nullptr);
    launch.cooperative = true;
    return launch_kernel(launch, NullStream::kPerThread);
  });
}

}  // extern "C"
