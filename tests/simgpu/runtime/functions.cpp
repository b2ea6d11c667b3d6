// Kernel handles and attributes: cudaGetKernel, cudaGetFuncBySymbol,
// cudaFuncGetAttributes, cudaFuncSetAttribute, cudaFuncGetName, ...
// A cudaKernel_t is the driver's CUkernel and a cudaFunction_t its CUfunction
// in the current context, as cuda_runtime_api.h documents.
#include <cuda_runtime_api.h>

#include "context.h"
#include "errors.h"
#include "launch.h"
#include "registry.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

namespace {

static_assert(static_cast<int>(cudaFuncAttributeMaxDynamicSharedMemorySize) ==
              static_cast<int>(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES));
static_assert(static_cast<int>(cudaFuncAttributeClusterSchedulingPolicyPreference) ==
              static_cast<int>(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE));
static_assert(static_cast<int>(cudaFuncCachePreferL1) == static_cast<int>(CU_FUNC_CACHE_PREFER_L1));

// Attributes every driver must answer; the cluster ones are read when the
// driver has them and left 0 otherwise (what a pre-Hopper device reports).
cudaError_t read_function_attributes(const DriverApi* api, CUfunction function,
                                     cudaFuncAttributes* attributes) {
  *attributes = cudaFuncAttributes{};
  struct SizeField {
    CUfunction_attribute attribute;
    size_t* field;
  };
  const SizeField size_fields[] = {
      {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &attributes->sharedSizeBytes},
      {CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, &attributes->constSizeBytes},
      {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &attributes->localSizeBytes},
  };
  for (const SizeField& entry : size_fields) {
    int value = 0;
    if (CUresult result = api->cuFuncGetAttribute(&value, entry.attribute, function)) {
      return runtime_error_from(result);
    }
    *entry.field = static_cast<size_t>(value);
  }
  struct IntField {
    CUfunction_attribute attribute;
    int* field;
    bool required;
  };
  const IntField int_fields[] = {
      {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &attributes->maxThreadsPerBlock, true},
      {CU_FUNC_ATTRIBUTE_NUM_REGS, &attributes->numRegs, true},
      {CU_FUNC_ATTRIBUTE_PTX_VERSION, &attributes->ptxVersion, true},
      {CU_FUNC_ATTRIBUTE_BINARY_VERSION, &attributes->binaryVersion, true},
      {CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, &attributes->cacheModeCA, false},
      {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &attributes->maxDynamicSharedSizeBytes,
       true},
      {CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, &attributes->preferredShmemCarveout,
       false},
      {CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET, &attributes->clusterDimMustBeSet, false},
      {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, &attributes->requiredClusterWidth, false},
      {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, &attributes->requiredClusterHeight, false},
      {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, &attributes->requiredClusterDepth, false},
      {CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE,
       &attributes->clusterSchedulingPolicyPreference, false},
      {CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
       &attributes->nonPortableClusterSizeAllowed, false},
  };
  for (const IntField& entry : int_fields) {
    CUresult result = api->cuFuncGetAttribute(entry.field, entry.attribute, function);
    if (result != CUDA_SUCCESS) {
      if (entry.required) return runtime_error_from(result);
      *entry.field = 0;
    }
  }
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaGetKernel(cudaKernel_t* kernelPtr, const void* entryFuncAddr) {
  if (kernelPtr == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUkernel kernel = nullptr;
  if (cudaError_t error = kernel_for(api, entryFuncAddr, &kernel)) return finish(error);
  *kernelPtr = reinterpret_cast<cudaKernel_t>(kernel);
  return cudaSuccess;
}

cudaError_t cudaGetFuncBySymbol(cudaFunction_t* functionPtr, const void* symbolPtr) {
  if (functionPtr == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, symbolPtr, &api, &function)) {
    return finish(error);
  }
  *functionPtr = reinterpret_cast<cudaFunction_t>(function);
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char** name, const void* func) {
  if (name == nullptr) return finish(cudaErrorInvalidValue);
  const char* device_name = device_name_of(func);
  if (device_name == nullptr) return finish(cudaErrorInvalidDeviceFunction);
  *name = device_name;
  return cudaSuccess;
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes* attr, const void* func) {
  if (attr == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, func, &api, &function)) {
    return finish(error);
  }
  return finish(read_function_attributes(api, function, attr));
}

// The occupancy calculator, as the real runtime does it: the kernel's
// CUfunction in the current context, then the driver's calculator.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* numBlocks, const void* func,
                                                                   int blockSize, size_t dynamicSMemSize,
                                                                   unsigned int flags) {
  if (numBlocks == nullptr) return finish(cudaErrorInvalidValue);
  if (flags & ~unsigned(cudaOccupancyDisableCachingOverride)) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, func, &api, &function)) {
    return finish(error);
  }
  return finish(api->cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, function, blockSize,
                                                                          dynamicSMemSize, flags));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* numBlocks, const void* func, int blockSize,
                                                          size_t dynamicSMemSize) {
  return traced("cudaOccupancyMaxActiveBlocksPerMultiprocessor", [&] { return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                                cudaOccupancyDefault); });
}

cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t* dynamicSmemSize, const void* func,
                                                      int numBlocks, int blockSize) {
  if (dynamicSmemSize == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, func, &api, &function)) {
    return finish(error);
  }
  return finish(
      api->cuOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, function, numBlocks, blockSize));
}

cudaError_t cudaFuncSetAttribute(const void* func, enum cudaFuncAttribute attr, int value) {
  const DriverApi* api = nullptr;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, func, &api, &function)) {
    return finish(error);
  }
  return finish(api->cuFuncSetAttribute(function, static_cast<CUfunction_attribute>(attr), value));
}

cudaError_t cudaFuncSetCacheConfig(const void* func, enum cudaFuncCache cacheConfig) {
  const DriverApi* api = nullptr;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, func, &api, &function)) {
    return finish(error);
  }
  return finish(api->cuFuncSetCacheConfig(function, static_cast<CUfunc_cache>(cacheConfig)));
}

cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr,
                                            int value, int device) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUkernel resolved = nullptr;
  if (cudaError_t error = kernel_for(api, reinterpret_cast<const void*>(kernel), &resolved)) {
    return finish(error);
  }
  return finish(api->cuKernelSetAttribute(static_cast<CUfunction_attribute>(attr), value, resolved,
                                          static_cast<CUdevice>(device)));
}

}  // extern "C"
