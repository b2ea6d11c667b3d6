// Building graphs by hand, beyond what capture.cpp needs for its own nodes:
// cuGraphClone, kernel node parameters, event record/wait nodes and memory
// nodes (tests/simgpu/README.md, "Stream capture and graphs").
#include <algorithm>

#include "api_guard.h"
#include "capture.h"
#include "driver_state.h"
#include "event.h"
#include "mempool.h"
#include "module.h"

using namespace simgpu;

namespace {

CUfunction function_of(const CUDA_KERNEL_NODE_PARAMS_v2& params) {
  return params.func ? params.func : reinterpret_cast<CUfunction>(params.kern);
}

CUDA_KERNEL_NODE_PARAMS_v2 as_v2(const CUDA_KERNEL_NODE_PARAMS_v1& v1) {
  CUDA_KERNEL_NODE_PARAMS_v2 params{};
  params.func = v1.func;
  params.gridDimX = v1.gridDimX, params.gridDimY = v1.gridDimY, params.gridDimZ = v1.gridDimZ;
  params.blockDimX = v1.blockDimX, params.blockDimY = v1.blockDimY, params.blockDimZ = v1.blockDimZ;
  params.sharedMemBytes = v1.sharedMemBytes;
  params.kernelParams = v1.kernelParams;
  params.extra = v1.extra;
  return params;
}

CUresult add_event_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* dependencies, size_t count, CUevent event,
                        CUgraphNodeType type) {
  if (!event || !state().events.contains(event)) return CUDA_ERROR_INVALID_VALUE;
  auto node = std::make_unique<CUgraphNode_st>();
  node->description.type = type;
  node->description.event = event;
  node->work.node = node->description;
  return add_node(out, graph, dependencies, count, std::move(node));
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuGraphClone(CUgraph* phGraphClone, CUgraph originalGraph) {
  return api_call([&] {
    if (!phGraphClone) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraph_st* original = as_graph(originalGraph);
    if (!original) return CUDA_ERROR_INVALID_VALUE;
    // Memory nodes own their allocation: a clone would free it twice.
    for (const auto& node : original->nodes)
      if (node->description.type == CU_GRAPH_NODE_TYPE_MEM_ALLOC || node->description.type == CU_GRAPH_NODE_TYPE_MEM_FREE)
        return CUDA_ERROR_NOT_SUPPORTED;
    *phGraphClone = clone_graph(*original);
    return CUDA_SUCCESS;
  });
}

// The node's new parameters apply to executable graphs instantiated later,
// not to those already made (cuda.h, cuGraphKernelNodeSetParams).
CUresult CUDAAPI cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2* nodeParams) {
  return api_call([&] {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    const CUfunction function = function_of(*nodeParams);
    if (!as_function(function)) return CUDA_ERROR_INVALID_VALUE;
    const unsigned grid[3] = {nodeParams->gridDimX, nodeParams->gridDimY, nodeParams->gridDimZ};
    const unsigned block[3] = {nodeParams->blockDimX, nodeParams->blockDimY, nodeParams->blockDimZ};
    auto made = kernel_node(function, grid, block, nodeParams->sharedMemBytes);
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    node->description = made->description;
    node->work.node = made->work.node;
    node->work.duration_ns = made->work.duration_ns;
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  const CUDA_KERNEL_NODE_PARAMS_v2 params = as_v2(*nodeParams);
  return cuGraphKernelNodeSetParams_v2(hNode, &params);
}
CUresult CUDAAPI cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 params{};
  const CUresult result = cuGraphKernelNodeGetParams_v2(hNode, &params);
  if (result != CUDA_SUCCESS) return result;
  *nodeParams = CUDA_KERNEL_NODE_PARAMS_v1{};
  nodeParams->func = params.func;
  nodeParams->gridDimX = params.gridDimX, nodeParams->gridDimY = params.gridDimY;
  nodeParams->gridDimZ = params.gridDimZ;
  nodeParams->blockDimX = params.blockDimX, nodeParams->blockDimY = params.blockDimY;
  nodeParams->blockDimZ = params.blockDimZ;
  nodeParams->sharedMemBytes = params.sharedMemBytes;
  return CUDA_SUCCESS;
}

// At each launch the record node makes the event stand for its completion
// and the wait node waits for the event's newest record (capture.cpp,
// launch_graph).
CUresult CUDAAPI cuGraphAddEventRecordNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                           size_t numDependencies, CUevent event) {
  return api_call([&] {
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event, CU_GRAPH_NODE_TYPE_EVENT_RECORD);
  });
}
CUresult CUDAAPI cuGraphAddEventWaitNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                         size_t numDependencies, CUevent event) {
  return api_call([&] {
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event, CU_GRAPH_NODE_TYPE_WAIT_EVENT);
  });
}
CUresult CUDAAPI cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return api_call([&] {
    if (!event_out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_EVENT_RECORD) return CUDA_ERROR_INVALID_VALUE;
    *event_out = node->description.event;
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent* event_out) {
  return api_call([&] {
    if (!event_out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_WAIT_EVENT) return CUDA_ERROR_INVALID_VALUE;
    *event_out = node->description.event;
    return CUDA_SUCCESS;
  });
}

// Simplified as for captured allocations: the memory is taken from the
// device's default pool when the node is added and held by the graph until
// it is destroyed; the address is fixed for the graph's lifetime, as
// documented.
CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                        size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS* nodeParams) {
  return api_call([&] {
    if (!nodeParams || nodeParams->bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    const CUmemPoolProps& props = nodeParams->poolProps;
    if (props.allocType != CU_MEM_ALLOCATION_TYPE_PINNED || props.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
      return CUDA_ERROR_INVALID_VALUE;
    if (props.handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_INVALID_VALUE;  // "IPC is not supported"
    const int device = props.location.id;
    if (device < 0 || size_t(device) >= state().devices.size()) return CUDA_ERROR_INVALID_VALUE;
    CUmemPoolHandle_st* pool = state().devices[size_t(device)]->default_pool;
    if (!pool) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr address = 0;
    if (CUresult result = allocate_from_pool(*pool, nodeParams->bytesize, address); result != CUDA_SUCCESS)
      return result;
    auto node = std::make_unique<CUgraphNode_st>();
    node->description.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
    node->description.bytes = nodeParams->bytesize;
    node->description.dst = address;
    node->description.grid[0] = unsigned(device);
    node->work.node = node->description;
    const CUresult result = add_node(phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
    if (result != CUDA_SUCCESS) {
      free_pool_block_now(address);
      return result;
    }
    std::lock_guard lock(capture_mutex());
    (*phGraphNode)->graph->owned.push_back(address);
    nodeParams->dptr = address;
    return CUDA_SUCCESS;
  });
}

// Only memory a mem-alloc node of the same graph allocated can be freed in
// it (the simulator does not model frees of memory from outside the graph).
CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                       size_t numDependencies, CUdeviceptr dptr) {
  return api_call([&] {
    {
      std::lock_guard lock(capture_mutex());
      CUgraph_st* graph = as_graph(hGraph);
      if (!graph) return CUDA_ERROR_INVALID_VALUE;
      if (std::find(graph->owned.begin(), graph->owned.end(), dptr) == graph->owned.end())
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    auto node = std::make_unique<CUgraphNode_st>();
    node->description.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
    node->description.dst = dptr;
    node->work.node = node->description;
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
  });
}

}  // extern "C"
