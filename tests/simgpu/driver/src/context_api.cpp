// Primary contexts, created contexts, and the per-thread current-context stack.
#include <cudaProfiler.h>

#include <algorithm>

#include "api_guard.h"
#include "capture.h"
#include "context.h"
#include "driver_state.h"
#include "kernel_limits.h"
#include "mempool.h"

using namespace simgpu;

namespace {

constexpr unsigned kValidContextFlags = CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX |
                                        CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS;

CUresult create_context(CUcontext* pctx, unsigned flags, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  if (flags & ~kValidContextFlags) return CUDA_ERROR_INVALID_VALUE;
  Device* device = find_device(dev);
  if (!device) return CUDA_ERROR_INVALID_DEVICE;
  auto* context = new CUctx_st;
  context->id = state().new_id();
  context->device = device;
  activate_context(context, flags);
  state().contexts.insert(context);
  thread_context_stack().push_back(context);
  *pctx = context;
  return CUDA_SUCCESS;
}

CUresult destroy_context(CUcontext ctx) {
  if (!ctx || !state().contexts.contains(ctx)) return CUDA_ERROR_INVALID_VALUE;
  if (ctx->is_primary) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx->destroyed.exchange(true)) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
  {
    std::lock_guard lock(ctx->device->mutex);
    teardown_context(ctx);
  }
  // Documented: a context current to the calling thread is popped. Other
  // threads keep a destroyed context current and get CONTEXT_IS_DESTROYED.
  auto& stack = thread_context_stack();
  std::erase(stack, ctx);
  return CUDA_SUCCESS;
}

CUresult primary_release(CUdevice dev) {
  Device* device = find_device(dev);
  if (!device) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard lock(device->mutex);
  if (device->primary_retain_count == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--device->primary_retain_count == 0) teardown_context(device->primary_context);
  return CUDA_SUCCESS;
}

CUresult primary_reset(CUdevice dev) {
  Device* device = find_device(dev);
  if (!device) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard lock(device->mutex);
  CUctx_st* primary = device->primary_context;
  if (primary->active.load()) {
    teardown_context(primary);
    // The handle stays valid for everyone still holding a retain: it comes back
    // fresh, with no allocations, streams or modules.
    if (device->primary_retain_count > 0) activate_context(primary, device->primary_flags);
  }
  return CUDA_SUCCESS;
}

CUresult primary_set_flags(CUdevice dev, unsigned flags) {
  if (flags & ~kValidContextFlags) return CUDA_ERROR_INVALID_VALUE;
  Device* device = find_device(dev);
  if (!device) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard lock(device->mutex);
  device->primary_flags = flags;
  device->primary_context->flags = flags;
  return CUDA_SUCCESS;
}

CUresult context_or_current(CUcontext ctx, CUctx_st*& context) {
  if (ctx) {
    context = ctx;
    return check_context(ctx);
  }
  return require_current_context(context);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return api_call([&] {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard lock(device->mutex);
    if (device->primary_retain_count++ == 0) {
      activate_context(device->primary_context, device->primary_flags);
    }
    *pctx = device->primary_context;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  return api_call([&] { return primary_release(dev); });
}
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev) {
  return api_call([&] { return primary_reset(dev); });
}
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) { return cuDevicePrimaryCtxReset_v2(dev); }

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return api_call([&] { return primary_set_flags(dev, flags); });
}
CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  return api_call([&] {
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard lock(device->mutex);
    *flags = device->primary_flags;
    *active = device->primary_retain_count > 0;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags, CUdevice dev) {
  return api_call([&] {
    if (ctxCreateParams && (ctxCreateParams->numExecAffinityParams > 0 || ctxCreateParams->cigParams)) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    return create_context(pctx, flags, dev);
  });
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags,
                                CUdevice dev) {
  return api_call([&] {
    if (paramsArray && numParams > 0) return CUDA_ERROR_NOT_SUPPORTED;
    return create_context(pctx, flags, dev);
  });
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return api_call([&] { return create_context(pctx, flags, dev); });
}
CUresult CUDAAPI cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return cuCtxCreate_v2(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx) {
  return api_call([&] { return destroy_context(ctx); });
}
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) { return cuCtxDestroy_v2(ctx); }

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* pctx) {
  return api_call([&] {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = current_context();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  return api_call([&] {
    auto& stack = thread_context_stack();
    if (!ctx) {
      if (!stack.empty()) stack.pop_back();
      return CUDA_SUCCESS;
    }
    if (!state().contexts.contains(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx->destroyed.load()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (stack.empty()) {
      stack.push_back(ctx);
    } else {
      stack.back() = ctx;
    }
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) {
  return api_call([&] {
    if (!ctx || !state().contexts.contains(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx->destroyed.load()) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    thread_context_stack().push_back(ctx);
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) { return cuCtxPushCurrent_v2(ctx); }

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext* pctx) {
  return api_call([&] {
    auto& stack = thread_context_stack();
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = stack.back();
    stack.pop_back();
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuCtxPopCurrent(CUcontext* pctx) { return cuCtxPopCurrent_v2(pctx); }

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  return api_call([&] {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = context_or_current(ctx, context); result != CUDA_SUCCESS) return result;
    *device = context->device->ordinal;
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) { return cuCtxGetDevice_v2(device, nullptr); }

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx) {
  return api_call([&] {
    CUctx_st* context = nullptr;
    if (CUresult result = context_or_current(ctx, context); result != CUDA_SUCCESS) return result;
    if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
    synchronize_context(context);
    trim_pools_after_synchronize();
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuCtxSynchronize(void) { return cuCtxSynchronize_v2(nullptr); }

CUresult CUDAAPI cuCtxGetFlags(unsigned int* flags) {
  return api_call([&] {
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    *flags = context->flags;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxSetFlags(unsigned int flags) {
  return api_call([&] {
    if (flags & ~kValidContextFlags) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    context->flags = flags;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  return api_call([&] {
    if (!ctxId) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = context_or_current(ctx, context); result != CUDA_SUCCESS) return result;
    *ctxId = context->id;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  return api_call([&] {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = context_or_current(ctx, context); result != CUDA_SUCCESS) return result;
    *version = 3020;  // what the real driver reports for contexts of the v2 API
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  return api_call([&] {
    if (!pvalue || limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    std::lock_guard lock(context->settings_mutex);
    *pvalue = context->limits[limit];
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) {
  return api_call([&] {
    if (limit < 0 || limit >= CU_LIMIT_MAX) return CUDA_ERROR_INVALID_VALUE;
    // The set-aside is bounded by CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE
    // (programming guide, "L2 cache set-aside"); more is refused, not clamped.
    if (limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE && value > size_t(kMaxPersistingL2Bytes)) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    std::lock_guard lock(context->settings_mutex);
    context->limits[limit] = value;
    return CUDA_SUCCESS;
  });
}

// Resets every persisting L2 line to normal. The simulated L2 keeps no lines,
// so only the context is checked.
CUresult CUDAAPI cuCtxResetPersistingL2Cache() {
  return api_call([&] {
    CUctx_st* context = nullptr;
    return require_current_context(context);
  });
}

CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  return api_call([&] {
    if (!pconfig) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    std::lock_guard lock(context->settings_mutex);
    *pconfig = context->cache_config;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config) {
  return api_call([&] {
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    std::lock_guard lock(context->settings_mutex);
    context->cache_config = config;
    return CUDA_SUCCESS;
  });
}

// Priorities are accepted and reported; they do not change scheduling here.
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return api_call([&] {
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = -5;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return api_call([&] {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    if (check_context(peerContext) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
    if (peerContext->device == context->device) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard lock(context->settings_mutex);
    if (!context->peers.insert(peerContext).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuCtxDisablePeerAccess(CUcontext peerContext) {
  return api_call([&] {
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    std::lock_guard lock(context->settings_mutex);
    if (context->peers.erase(peerContext) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    return CUDA_SUCCESS;
  });
}

}  // extern "C"

extern "C" {

// Profiler capture ranges: there is no profiler inside the simulated driver
// (tools observe the calls from outside), so these only check for a context.
CUresult CUDAAPI cuProfilerStart(void) {
  return api_call([&] {
    CUctx_st* context = nullptr;
    return require_current_context(context);
  });
}

CUresult CUDAAPI cuProfilerStop(void) {
  return api_call([&] {
    CUctx_st* context = nullptr;
    return require_current_context(context);
  });
}

}  // extern "C"
