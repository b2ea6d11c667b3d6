// Building graphs node by node (cudaGraphCreate, cudaGraphAdd*Node, ...).
// As the real runtime does, each call translates its parameters and makes
// the driver's cuGraph* call through the driver table; the driver owns the
// graph. Kernel nodes name the kernel by its host stub, which the runtime
// resolves to the CUfunction of the current context (as for a launch) and
// translates back for cudaGraphKernelNodeGetParams.
#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>

#include "context.h"
#include "copy_dispatch.h"
#include "driver_api.h"
#include "errors.h"
#include "launch.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

static_assert(static_cast<int>(cudaGraphNodeTypeKernel) == static_cast<int>(CU_GRAPH_NODE_TYPE_KERNEL));
static_assert(static_cast<int>(cudaGraphNodeTypeMemAlloc) == static_cast<int>(CU_GRAPH_NODE_TYPE_MEM_ALLOC));
static_assert(sizeof(cudaMemAllocNodeParams) == sizeof(CUDA_MEM_ALLOC_NODE_PARAMS));

namespace {

// CUfunction -> the host stub (or cudaKernel_t) the program named it by.
std::mutex& stub_mutex() {
  static auto* mutex = new std::mutex;  // never destroyed: exit-safe
  return *mutex;
}
std::unordered_map<CUfunction, void*>& stub_of() {
  static auto* stubs = new std::unordered_map<CUfunction, void*>;
  return *stubs;
}

// The driver's form of runtime kernel node parameters, the kernel resolved
// in the current context.
cudaError_t driver_kernel_params(const cudaKernelNodeParams* params, const DriverApi** api,
                                 CUDA_KERNEL_NODE_PARAMS_v2* out) {
  if (params == nullptr) return cudaErrorInvalidValue;
  CUfunction function = nullptr;
  if (cudaError_t error = resolve_function(DefaultStream::legacy, params->func, api, &function)) return error;
  {
    std::lock_guard lock(stub_mutex());
    stub_of()[function] = params->func;
  }
  *out = CUDA_KERNEL_NODE_PARAMS_v2{};
  out->func = function;
  out->gridDimX = params->gridDim.x, out->gridDimY = params->gridDim.y, out->gridDimZ = params->gridDim.z;
  out->blockDimX = params->blockDim.x, out->blockDimY = params->blockDim.y, out->blockDimZ = params->blockDim.z;
  out->sharedMemBytes = params->sharedMemBytes;
  out->kernelParams = params->kernelParams;
  out->extra = params->extra;
  return cudaSuccess;
}

CUmemorytype driver_memory_type(MemorySide side) {
  switch (side) {
    case MemorySide::host: return CU_MEMORYTYPE_HOST;
    case MemorySide::device: return CU_MEMORYTYPE_DEVICE;
    case MemorySide::unified: return CU_MEMORYTYPE_UNIFIED;
  }
  return CU_MEMORYTYPE_UNIFIED;
}

// cudaMemcpy3DParms (linear memory only: arrays are not simulated) as the
// driver's CUDA_MEMCPY3D; the kind decides each side's memory type.
cudaError_t driver_copy_params(const DriverApi& api, const cudaMemcpy3DParms* params, CUDA_MEMCPY3D* out) {
  if (params == nullptr) return cudaErrorInvalidValue;
  if (params->srcArray != nullptr || params->dstArray != nullptr) return cudaErrorNotSupported;
  if (params->srcPtr.ptr == nullptr || params->dstPtr.ptr == nullptr) return cudaErrorInvalidValue;
  CopySides sides{};
  if (cudaError_t error = copy_sides(api, params->kind, params->dstPtr.ptr, params->srcPtr.ptr, &sides)) return error;
  *out = CUDA_MEMCPY3D{};
  out->srcMemoryType = driver_memory_type(sides.source);
  out->srcHost = params->srcPtr.ptr;
  out->srcDevice = reinterpret_cast<CUdeviceptr>(params->srcPtr.ptr);
  out->srcPitch = params->srcPtr.pitch;
  out->srcHeight = params->srcPtr.ysize;
  out->srcXInBytes = params->srcPos.x, out->srcY = params->srcPos.y, out->srcZ = params->srcPos.z;
  out->dstMemoryType = driver_memory_type(sides.destination);
  out->dstHost = params->dstPtr.ptr;
  out->dstDevice = reinterpret_cast<CUdeviceptr>(params->dstPtr.ptr);
  out->dstPitch = params->dstPtr.pitch;
  out->dstHeight = params->dstPtr.ysize;
  out->dstXInBytes = params->dstPos.x, out->dstY = params->dstPos.y, out->dstZ = params->dstPos.z;
  out->WidthInBytes = params->extent.width;
  out->Height = params->extent.height;
  out->Depth = params->extent.depth;
  return cudaSuccess;
}

cudaError_t add_memcpy_node(cudaGraphNode_t* node, cudaGraph_t graph, const cudaGraphNode_t* dependencies,
                            size_t count, const cudaMemcpy3DParms* params) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  CUDA_MEMCPY3D copy{};
  if (cudaError_t error = driver_copy_params(*api, params, &copy)) return finish(error);
  CUcontext context = nullptr;
  api->cuCtxGetCurrent(&context);
  return finish(api->cuGraphAddMemcpyNode(node, graph, dependencies, count, &copy, context));
}

template <typename DriverCall>
cudaError_t forward(const char* name, DriverCall&& call) {
  return traced(name, [&] { return with_context(DefaultStream::legacy, call); });
}

}  // namespace

extern "C" {

cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  return forward("cudaGraphCreate", [&](const DriverApi& api) { return api.cuGraphCreate(pGraph, flags); });
}

cudaError_t cudaGraphClone(cudaGraph_t* pGraphClone, cudaGraph_t originalGraph) {
  return forward("cudaGraphClone", [&](const DriverApi& api) { return api.cuGraphClone(pGraphClone, originalGraph); });
}

cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaKernelNodeParams* pNodeParams) {
  return traced("cudaGraphAddKernelNode", [&] {
    const DriverApi* api = nullptr;
    CUDA_KERNEL_NODE_PARAMS_v2 params{};
    if (cudaError_t error = driver_kernel_params(pNodeParams, &api, &params)) return finish(error);
    return finish(api->cuGraphAddKernelNode(pGraphNode, graph, pDependencies, numDependencies, &params));
  });
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, cudaKernelNodeParams* pNodeParams) {
  return traced("cudaGraphKernelNodeGetParams", [&] {
    if (pNodeParams == nullptr) return finish(cudaErrorInvalidValue);
    const DriverApi* api = nullptr;
    if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
    CUDA_KERNEL_NODE_PARAMS_v2 params{};
    if (CUresult result = api->cuGraphKernelNodeGetParams(node, &params)) return finish(result);
    void* stub = params.func;
    {
      std::lock_guard lock(stub_mutex());
      if (auto known = stub_of().find(params.func); known != stub_of().end()) stub = known->second;
    }
    *pNodeParams = cudaKernelNodeParams{};
    pNodeParams->func = stub;
    pNodeParams->gridDim = dim3(params.gridDimX, params.gridDimY, params.gridDimZ);
    pNodeParams->blockDim = dim3(params.blockDimX, params.blockDimY, params.blockDimZ);
    pNodeParams->sharedMemBytes = params.sharedMemBytes;
    pNodeParams->kernelParams = params.kernelParams;
    pNodeParams->extra = params.extra;
    return finish(cudaSuccess);
  });
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const cudaKernelNodeParams* pNodeParams) {
  return traced("cudaGraphKernelNodeSetParams", [&] {
    const DriverApi* api = nullptr;
    CUDA_KERNEL_NODE_PARAMS_v2 params{};
    if (cudaError_t error = driver_kernel_params(pNodeParams, &api, &params)) return finish(error);
    return finish(api->cuGraphKernelNodeSetParams(node, &params));
  });
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                             const cudaKernelNodeParams* pNodeParams) {
  return traced("cudaGraphExecKernelNodeSetParams", [&] {
    const DriverApi* api = nullptr;
    CUDA_KERNEL_NODE_PARAMS_v2 params{};
    if (cudaError_t error = driver_kernel_params(pNodeParams, &api, &params)) return finish(error);
    return finish(api->cuGraphExecKernelNodeSetParams(hGraphExec, node, &params));
  });
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaMemcpy3DParms* pCopyParams) {
  return traced("cudaGraphAddMemcpyNode",
                [&] { return add_memcpy_node(pGraphNode, graph, pDependencies, numDependencies, pCopyParams); });
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t* pDependencies, size_t numDependencies, void* dst,
                                     const void* src, size_t count, cudaMemcpyKind kind) {
  return traced("cudaGraphAddMemcpyNode1D", [&] {
    cudaMemcpy3DParms params{};
    params.srcPtr = cudaPitchedPtr{const_cast<void*>(src), count, count, 1};
    params.dstPtr = cudaPitchedPtr{dst, count, count, 1};
    params.extent = cudaExtent{count, 1, 1};
    params.kind = kind;
    return add_memcpy_node(pGraphNode, graph, pDependencies, numDependencies, &params);
  });
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                   size_t numDependencies, const cudaMemsetParams* pMemsetParams) {
  return forward("cudaGraphAddMemsetNode", [&](const DriverApi& api) {
    if (pMemsetParams == nullptr) return CUDA_ERROR_INVALID_VALUE;
    CUDA_MEMSET_NODE_PARAMS params{};
    params.dst = reinterpret_cast<CUdeviceptr>(pMemsetParams->dst);
    params.pitch = pMemsetParams->pitch;
    params.value = pMemsetParams->value;
    params.elementSize = pMemsetParams->elementSize;
    params.width = pMemsetParams->width;
    params.height = pMemsetParams->height;
    CUcontext context = nullptr;
    api.cuCtxGetCurrent(&context);
    return api.cuGraphAddMemsetNode(pGraphNode, graph, pDependencies, numDependencies, &params, context);
  });
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                 size_t numDependencies, const cudaHostNodeParams* pNodeParams) {
  return forward("cudaGraphAddHostNode", [&](const DriverApi& api) {
    return api.cuGraphAddHostNode(pGraphNode, graph, pDependencies, numDependencies,
                                  reinterpret_cast<const CUDA_HOST_NODE_PARAMS*>(pNodeParams));
  });
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph, const cudaGraphNode_t* pDependencies,
                                  size_t numDependencies) {
  return forward("cudaGraphAddEmptyNode", [&](const DriverApi& api) {
    return api.cuGraphAddEmptyNode(pGraphNode, graph, pDependencies, numDependencies);
  });
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                       const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                       cudaGraph_t childGraph) {
  return forward("cudaGraphAddChildGraphNode", [&](const DriverApi& api) {
    return api.cuGraphAddChildGraphNode(pGraphNode, graph, pDependencies, numDependencies, childGraph);
  });
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                        const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                        cudaEvent_t event) {
  return forward("cudaGraphAddEventRecordNode", [&](const DriverApi& api) {
    return api.cuGraphAddEventRecordNode(pGraphNode, graph, pDependencies, numDependencies, event);
  });
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                      const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                      cudaEvent_t event) {
  return forward("cudaGraphAddEventWaitNode", [&](const DriverApi& api) {
    return api.cuGraphAddEventWaitNode(pGraphNode, graph, pDependencies, numDependencies, event);
  });
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                     const cudaGraphNode_t* pDependencies, size_t numDependencies,
                                     cudaMemAllocNodeParams* nodeParams) {
  return forward("cudaGraphAddMemAllocNode", [&](const DriverApi& api) {
    return api.cuGraphAddMemAllocNode(pGraphNode, graph, pDependencies, numDependencies,
                                      reinterpret_cast<CUDA_MEM_ALLOC_NODE_PARAMS*>(nodeParams));
  });
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t* pGraphNode, cudaGraph_t graph,
                                    const cudaGraphNode_t* pDependencies, size_t numDependencies, void* dptr) {
  return forward("cudaGraphAddMemFreeNode", [&](const DriverApi& api) {
    return api.cuGraphAddMemFreeNode(pGraphNode, graph, pDependencies, numDependencies,
                                     reinterpret_cast<CUdeviceptr>(dptr));
  });
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t* from, const cudaGraphNode_t* to,
                                     const cudaGraphEdgeData* edgeData, size_t numDependencies) {
  return forward("cudaGraphAddDependencies", [&](const DriverApi& api) {
    return api.cuGraphAddDependencies(graph, from, to, reinterpret_cast<const CUgraphEdgeData*>(edgeData),
                                      numDependencies);
  });
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, cudaGraphNodeType* pType) {
  return forward("cudaGraphNodeGetType", [&](const DriverApi& api) {
    return api.cuGraphNodeGetType(node, reinterpret_cast<CUgraphNodeType*>(pType));
  });
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t* pDependencies,
                                         cudaGraphEdgeData* edgeData, size_t* pNumDependencies) {
  return forward("cudaGraphNodeGetDependencies", [&](const DriverApi& api) {
    return api.cuGraphNodeGetDependencies(node, pDependencies, reinterpret_cast<CUgraphEdgeData*>(edgeData),
                                          pNumDependencies);
  });
}

}  // extern "C"
