// Kernel queries: names, attributes (from the cubin's .nv.info records), the
// parameter layout, and a simple occupancy model.
#include <algorithm>

#include "api_guard.h"
#include "driver_state.h"
#include "kernel_limits.h"
#include "module.h"

using namespace simgpu;

namespace {

CUresult get_attribute(int* pi, CUfunction_attribute attrib, CUfunc_st& function) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(function.mutex);
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      *pi = max_threads_per_block(function);
      break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
      *pi = int(function.info.static_shared_bytes);
      break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
      *pi = 0;
      break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
      *pi = int(function.info.local_bytes);
      break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS:
      *pi = int(function.info.registers);
      break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
      *pi = function.sm_arch;
      break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
      *pi = 0;
      break;
    default:
      if (attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
      *pi = function.settable_attributes[attrib];
      break;
  }
  return CUDA_SUCCESS;
}

CUresult set_attribute(CUfunc_st& function, CUfunction_attribute attrib, int value) {
  std::lock_guard lock(function.mutex);
  switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
      if (value < 0 || value + int(function.info.static_shared_bytes) > kSharedBytesPerBlockOptin) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
      if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
      break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
      if (value < 0) return CUDA_ERROR_INVALID_VALUE;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;  // read-only or unknown
  }
  function.settable_attributes[attrib] = value;
  return CUDA_SUCCESS;
}

CUresult parameter_info(CUfunc_st* function, size_t index, size_t* offset, size_t* size) {
  if (!function) return CUDA_ERROR_INVALID_HANDLE;
  if (!offset && !size) return CUDA_ERROR_INVALID_VALUE;
  if (!function->info.has_parameter_info || index >= function->info.parameters.size()) return CUDA_ERROR_INVALID_VALUE;
  if (offset) *offset = function->info.parameters[index].offset;
  if (size) *size = function->info.parameters[index].bytes;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuFuncGetName(const char** name, CUfunction hfunc) {
  return api_call([&] {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(hfunc);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    *name = function->info.name.c_str();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuKernelGetName(const char** name, CUkernel hfunc) {
  return cuFuncGetName(name, reinterpret_cast<CUfunction>(hfunc));
}

CUresult CUDAAPI cuFuncGetAttribute(int* pi, CUfunction_attribute attrib, CUfunction hfunc) {
  return api_call([&] {
    CUfunc_st* function = as_function(hfunc);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    return get_attribute(pi, attrib, *function);
  });
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value) {
  return api_call([&] {
    CUfunc_st* function = as_function(hfunc);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    return set_attribute(*function, attrib, value);
  });
}

CUresult CUDAAPI cuKernelGetAttribute(int* pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev) {
  return api_call([&] {
    CUfunc_st* function = as_function(kernel);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    if (!find_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    return get_attribute(pi, attrib, *function);
  });
}

CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev) {
  return api_call([&] {
    CUfunc_st* function = as_function(kernel);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    if (!find_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    return set_attribute(*function, attrib, val);
  });
}

CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  return api_call([&] { return parameter_info(as_function(func), paramIndex, paramOffset, paramSize); });
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t* paramOffset, size_t* paramSize) {
  return api_call([&] { return parameter_info(as_function(kernel), paramIndex, paramOffset, paramSize); });
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config) {
  return api_call([&] {
    CUfunc_st* function = as_function(hfunc);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(function->mutex);
    function->cache_config = config;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev) {
  return api_call([&] {
    if (!find_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    return cuFuncSetCacheConfig(reinterpret_cast<CUfunction>(kernel), config);
  });
}

CUresult CUDAAPI cuFuncIsLoaded(CUfunctionLoadingState* loading_state, CUfunction function) {
  return api_call([&] {
    if (!loading_state) return CUDA_ERROR_INVALID_VALUE;
    if (!as_function(function)) return CUDA_ERROR_INVALID_HANDLE;
    *loading_state = CU_FUNCTION_LOADING_STATE_LOADED;  // modules load eagerly
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuFuncLoad(CUfunction function) {
  return api_call([&] { return as_function(function) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; });
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, CUfunction func, int blockSize,
                                                                      size_t dynamicSMemSize, unsigned int flags) {
  return api_call([&] {
    (void)flags;
    if (!numBlocks) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(func);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    *numBlocks = active_blocks_per_sm(*function, blockSize, dynamicSMemSize);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize, 0);
}

CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, CUfunction func, int numBlocks,
                                                        int blockSize) {
  return api_call([&] {
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(func);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    *dynamicSmemSize = available_dynamic_shared_bytes(*function, numBlocks, blockSize);
    return CUDA_SUCCESS;
  });
}

// Picks the block size (a multiple of 32) with the most resident threads per SM.
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int* minGridSize, int* blockSize, CUfunction func,
                                                           CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                           size_t dynamicSMemSize, int blockSizeLimit,
                                                           unsigned int flags) {
  return api_call([&] {
    (void)flags;
    if (!minGridSize || !blockSize) return CUDA_ERROR_INVALID_VALUE;
    CUfunc_st* function = as_function(func);
    if (!function) return CUDA_ERROR_INVALID_HANDLE;
    int limit = max_threads_per_block(*function);
    if (blockSizeLimit > 0) limit = std::min(limit, blockSizeLimit);
    int best_size = 0, best_blocks = 0;
    for (int size = 32; size <= limit; size += 32) {
      size_t shared = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(size) : dynamicSMemSize;
      int blocks = active_blocks_per_sm(*function, size, shared);
      if (blocks * size >= best_blocks * best_size) {
        best_size = size;
        best_blocks = blocks;
      }
    }
    *blockSize = best_size;
    *minGridSize = best_blocks * state().config.sm_count;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int* minGridSize, int* blockSize, CUfunction func,
                                                  CUoccupancyB2DSize blockSizeToDynamicSMemSize, size_t dynamicSMemSize,
                                                  int blockSizeLimit) {
  return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                   dynamicSMemSize, blockSizeLimit, 0);
}

}  // extern "C"
