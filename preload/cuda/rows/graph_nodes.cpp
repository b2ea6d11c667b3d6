// The nodes of an instantiated graph, read through the driver's graph
// queries (none of them is unsafe during a capture) and written as GraphNode
// records. Cold: once per instantiation.
#include <cstdlib>
#include <cstring>

#include "preload/cuda/driver_services.h"
#include "preload/cuda/function_names.h"
#include "preload/cuda/gpu_timing.h"
#include "preload/cuda/rows/graph_row.h"
#include "preload/record/emit.h"

namespace proflaunch::cuda {
namespace {

// Child graphs nest; a deeper one is left out rather than walked forever.
constexpr int kMaxChildDepth = 8;

struct NodeList {
  CUgraphNode* nodes = nullptr;
  size_t count = 0;
  ~NodeList() { std::free(nodes); }
};

bool list_nodes(CUgraph graph, NodeList& list) {
  const DriverServices& driver = driver_services();
  if (driver.graph_get_nodes == nullptr) return false;
  size_t count = 0;
  if (driver.graph_get_nodes(graph, nullptr, &count) != CUDA_SUCCESS) return false;
  if (count == 0) return true;
  list.nodes = static_cast<CUgraphNode*>(std::calloc(count, sizeof(CUgraphNode)));
  if (list.nodes == nullptr) return false;
  if (driver.graph_get_nodes(graph, list.nodes, &count) != CUDA_SUCCESS) return false;
  list.count = count;
  return true;
}

void describe_node(CUgraphNode node, CUgraphNodeType type, format::GraphNodeRecord& r) {
  const DriverServices& driver = driver_services();
  r.device = -1;
  switch (type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: {
      CUDA_KERNEL_NODE_PARAMS_v2 params{};
      if (driver.graph_kernel_node_get_params == nullptr ||
          driver.graph_kernel_node_get_params(node, &params) != CUDA_SUCCESS)
        break;
      CUfunction function = params.func;
      if (function == nullptr && params.kern != nullptr && driver.kernel_get_function != nullptr &&
          driver.kernel_get_function(&function, params.kern) == CUDA_SUCCESS && function != nullptr)
        name_kernel_function(reinterpret_cast<uint64_t>(function), params.kern);
      r.function = reinterpret_cast<uint64_t>(function);
      if (function != nullptr) ensure_function_named(r.function);
      r.grid = {params.gridDimX, params.gridDimY, params.gridDimZ};
      r.block = {params.blockDimX, params.blockDimY, params.blockDimZ};
      r.dynamic_shared_bytes = params.sharedMemBytes;
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMCPY: {
      CUDA_MEMCPY3D params{};
      if (driver.graph_memcpy_node_get_params != nullptr &&
          driver.graph_memcpy_node_get_params(node, &params) == CUDA_SUCCESS)
        r.bytes = uint64_t{params.WidthInBytes} * (params.Height ? params.Height : 1) * (params.Depth ? params.Depth : 1);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEMSET: {
      CUDA_MEMSET_NODE_PARAMS params{};
      if (driver.graph_memset_node_get_params != nullptr &&
          driver.graph_memset_node_get_params(node, &params) == CUDA_SUCCESS) {
        r.bytes = uint64_t{params.elementSize} * params.width * (params.height ? params.height : 1);
        r.address = params.dst;
      }
      break;
    }
    case CU_GRAPH_NODE_TYPE_HOST: {
      CUDA_HOST_NODE_PARAMS params{};
      if (driver.graph_host_node_get_params != nullptr &&
          driver.graph_host_node_get_params(node, &params) == CUDA_SUCCESS) {
        r.function = reinterpret_cast<uint64_t>(params.fn);
        if (params.fn != nullptr) ensure_host_function_named(r.function);
      }
      break;
    }
    case CU_GRAPH_NODE_TYPE_GRAPH: {
      CUgraph child = nullptr;
      if (driver.graph_child_graph_node_get_graph != nullptr &&
          driver.graph_child_graph_node_get_graph(node, &child) == CUDA_SUCCESS)
        r.function = reinterpret_cast<uint64_t>(child);
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_ALLOC: {
      CUDA_MEM_ALLOC_NODE_PARAMS params{};
      if (driver.graph_mem_alloc_node_get_params != nullptr &&
          driver.graph_mem_alloc_node_get_params(node, &params) == CUDA_SUCCESS) {
        r.bytes = params.bytesize;
        r.address = params.dptr;
        if (params.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE) r.device = params.poolProps.location.id;
      }
      break;
    }
    case CU_GRAPH_NODE_TYPE_MEM_FREE: {
      CUdeviceptr address = 0;
      if (driver.graph_mem_free_node_get_params != nullptr &&
          driver.graph_mem_free_node_get_params(node, &address) == CUDA_SUCCESS)
        r.address = address;
      break;
    }
    default:
      break;
  }
}

uint32_t record_nodes(CUgraph graph, CUgraphExec exec, int depth) {
  const DriverServices& driver = driver_services();
  NodeList list;
  if (!list_nodes(graph, list)) return 0;
  uint32_t written = 0;
  for (size_t i = 0; i < list.count; ++i) {
    const CUgraphNode node = list.nodes[i];
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    if (driver.graph_node_get_type == nullptr || driver.graph_node_get_type(node, &type) != CUDA_SUCCESS) continue;
    gpu_timing().graph_node_recorded(node);  // before the record: may call the backend's library
    size_t dependencies = 0;
    if (driver.graph_node_get_dependencies == nullptr ||
        driver.graph_node_get_dependencies(node, nullptr, &dependencies) != CUDA_SUCCESS)
      dependencies = 0;
    const size_t kept = dependencies < format::kMaxGraphNodeDependencies ? dependencies : format::kMaxGraphNodeDependencies;
    NodeList deps;
    if (kept != 0) {
      deps.nodes = static_cast<CUgraphNode*>(std::calloc(dependencies, sizeof(CUgraphNode)));
      size_t count = dependencies;
      if (deps.nodes == nullptr || driver.graph_node_get_dependencies(node, deps.nodes, &count) != CUDA_SUCCESS)
        dependencies = 0;
    }
    const size_t listed = dependencies == 0 ? 0 : kept;
    // Described before the record is reserved: naming a kernel may write a
    // definition, and nothing may come between a reserve and its commit.
    format::GraphNodeRecord node_record{};
    describe_node(node, type, node_record);
    auto* record = emit_with_tail<format::GraphNodeRecord>(static_cast<uint32_t>(listed * sizeof(uint64_t)));
    if (record == nullptr) continue;
    const format::RecordHeader header = record->header;
    *record = node_record;
    record->header = header;
    record->type = static_cast<uint8_t>(type);
    record->flags = dependencies > listed ? format::kGraphNodeDependenciesTruncated : 0;
    record->dependency_count = static_cast<uint16_t>(listed);
    record->graph_exec = reinterpret_cast<uint64_t>(exec);
    record->graph = reinterpret_cast<uint64_t>(graph);
    record->node = reinterpret_cast<uint64_t>(node);
    auto* tail = reinterpret_cast<unsigned char*>(record + 1);
    for (size_t d = 0; d < listed; ++d) {
      const uint64_t handle = reinterpret_cast<uint64_t>(deps.nodes[d]);
      std::memcpy(tail + d * sizeof handle, &handle, sizeof handle);
    }
    const uint64_t child = record->function;
    commit();
    ++written;
    if (type == CU_GRAPH_NODE_TYPE_GRAPH && child != 0 && depth < kMaxChildDepth)
      written += record_nodes(reinterpret_cast<CUgraph>(child), exec, depth + 1);
  }
  return written;
}

}  // namespace

uint32_t record_graph_nodes(CUgraph graph, CUgraphExec exec) noexcept { return record_nodes(graph, exec, 0); }

}  // namespace proflaunch::cuda
