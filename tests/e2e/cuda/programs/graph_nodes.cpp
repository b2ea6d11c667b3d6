// A graph built node by node through the driver API, the way TensorRT and
// hand-tuned inference code do: a memset, a kernel after it, a host function
// after that, and a child graph holding another kernel. It is instantiated,
// launched three times, its kernel swapped for another
// (cuGraphExecKernelNodeSetParams), updated from its own graph
// (cuGraphExecUpdate) and launched once more. Prints what it did; exits 0.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry graph_node_kernel()
{
  ret;
}
.visible .entry graph_child_kernel()
{
  ret;
}
.visible .entry graph_swapped_kernel()
{
  ret;
}
)";

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  std::fprintf(stderr, "error: %s failed: %s\n", what, name ? name : "?");
  std::exit(1);
}

void on_host(void* calls) { ++*static_cast<int*>(calls); }

}  // namespace

int main() {
  check(cuInit(0), "cuInit");
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, kPtx), "cuModuleLoadData");
  CUfunction kernel = nullptr, child_kernel = nullptr, swapped = nullptr;
  check(cuModuleGetFunction(&kernel, module, "graph_node_kernel"), "cuModuleGetFunction");
  check(cuModuleGetFunction(&child_kernel, module, "graph_child_kernel"), "cuModuleGetFunction");
  check(cuModuleGetFunction(&swapped, module, "graph_swapped_kernel"), "cuModuleGetFunction");
  CUdeviceptr buffer = 0;
  check(cuMemAlloc(&buffer, 1 << 16), "cuMemAlloc");

  CUgraph graph = nullptr, child = nullptr;
  check(cuGraphCreate(&graph, 0), "cuGraphCreate");
  check(cuGraphCreate(&child, 0), "cuGraphCreate");
  CUDA_MEMSET_NODE_PARAMS memset_params{};
  memset_params.dst = buffer;
  memset_params.value = 0x3;
  memset_params.elementSize = 4;
  memset_params.width = (1 << 16) / 4;
  memset_params.height = 1;
  CUgraphNode memset_node = nullptr, kernel_node = nullptr, host_node = nullptr, child_node = nullptr, inner = nullptr;
  check(cuGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params, context), "cuGraphAddMemsetNode");
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = kernel;
  params.gridDimX = 8, params.gridDimY = 1, params.gridDimZ = 1;
  params.blockDimX = 128, params.blockDimY = 1, params.blockDimZ = 1;
  check(cuGraphAddKernelNode(&kernel_node, graph, &memset_node, 1, &params), "cuGraphAddKernelNode");
  int host_calls = 0;
  CUDA_HOST_NODE_PARAMS host_params{on_host, &host_calls};
  check(cuGraphAddHostNode(&host_node, graph, &kernel_node, 1, &host_params), "cuGraphAddHostNode");
  CUDA_KERNEL_NODE_PARAMS child_params = params;
  child_params.func = child_kernel;
  child_params.gridDimX = 2;
  check(cuGraphAddKernelNode(&inner, child, nullptr, 0, &child_params), "cuGraphAddKernelNode");
  check(cuGraphAddChildGraphNode(&child_node, graph, &host_node, 1, child), "cuGraphAddChildGraphNode");

  CUgraphExec exec = nullptr;
  check(cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  CUstream stream = nullptr;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  for (int i = 0; i < 3; ++i) check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  params.func = swapped;
  check(cuGraphExecKernelNodeSetParams(exec, kernel_node, &params), "cuGraphExecKernelNodeSetParams");
  CUgraphExecUpdateResultInfo info{};
  check(cuGraphExecUpdate(exec, graph, &info), "cuGraphExecUpdate");
  check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  std::vector<unsigned> back(4);
  check(cuMemcpyDtoH(back.data(), buffer, back.size() * sizeof(unsigned)), "cuMemcpyDtoH");

  size_t nodes = 0;
  check(cuGraphGetNodes(graph, nullptr, &nodes), "cuGraphGetNodes");
  std::printf("graph_nodes: nodes=%zu launches=4 host_calls=%d memset=0x%x\n", nodes, host_calls, back[0]);
  check(cuGraphExecDestroy(exec), "cuGraphExecDestroy");
  check(cuGraphDestroy(child), "cuGraphDestroy");
  check(cuGraphDestroy(graph), "cuGraphDestroy");
  check(cuMemFree(buffer), "cuMemFree");
  return 0;
}
