// The runtime's graph API as NVIDIA's samples use it (simpleCudaGraphs,
// graphMemoryNodes), on whatever libcudart it is linked against:
//
//   --part nodes    a graph built node by node: a memset, two kernels after
//                   it (one edge added with cudaGraphAddDependencies), a
//                   device-to-host copy after both, a host node checking the
//                   copy, an empty join; cloned, the clone instantiated and
//                   launched three times, one kernel's parameters updated in
//                   the executable graph between launches.
//   --part capture  cudaMemcpyAsync from malloc()ed (pageable) memory and back,
//                   captured in global mode around a kernel and replayed
//                   three times with fresh input.
//   (default: both)
//
// Kernels compute nothing on the simulated GPU, so only the copies, the
// memset and the host node are checked. Prints one line per part and exits
// non-zero at the first unexpected result.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void graph_scale(float* data, int n, float factor) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

__global__ void graph_offset(float* data, int n, float offset) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += offset;
}

namespace {

#define CHECK(call)                                                                              \
  do {                                                                                           \
    const cudaError_t check_error = (call);                                                      \
    if (check_error != cudaSuccess) {                                                            \
      std::printf("graph_runtime: %s failed: %s (%d) at line %d\n", #call,                      \
                  cudaGetErrorName(check_error), int(check_error), __LINE__);                    \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

#define EXPECT(condition)                                                                        \
  do {                                                                                           \
    if (!(condition)) {                                                                          \
      std::printf("graph_runtime: expected %s at line %d\n", #condition, __LINE__);              \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

constexpr int kElements = 4096;
constexpr size_t kBytes = kElements * sizeof(float);

struct HostCheck {
  const unsigned char* copied = nullptr;
  int calls = 0;
  int good = 0;
};

// Runs as the host node, after the copy: every byte the memset wrote.
void CUDART_CB check_copy(void* user) {
  auto* check = static_cast<HostCheck*>(user);
  ++check->calls;
  bool all = true;
  for (size_t i = 0; i < kBytes; ++i) all = all && check->copied[i] == 0x3c;
  check->good += all;
}

cudaKernelNodeParams kernel_params(void* function, unsigned blocks, void** args) {
  cudaKernelNodeParams params{};
  params.func = function;
  params.gridDim = dim3(blocks);
  params.blockDim = dim3(256);
  params.kernelParams = args;
  return params;
}

void build_node_by_node() {
  float* device = nullptr;
  CHECK(cudaMalloc(&device, kBytes));
  std::vector<unsigned char> host(kBytes, 0);
  HostCheck check;
  check.copied = host.data();

  // The documented error returns first.
  cudaGraph_t graph = nullptr;
  EXPECT(cudaGraphCreate(nullptr, 0) == cudaErrorInvalidValue);
  EXPECT(cudaGraphCreate(&graph, 1) == cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaGraphCreate(&graph, 0));

  cudaMemsetParams memset_params{};
  memset_params.dst = device;
  memset_params.value = 0x3c;
  memset_params.elementSize = 1;
  memset_params.width = kBytes;
  memset_params.height = 1;
  cudaGraphNode_t memset_node, scale_node, offset_node, copy_node, host_node, join_node;
  CHECK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params));

  int n = kElements;
  float factor = 2.0f, offset = 1.0f;
  void* scale_args[] = {&device, &n, &factor};
  void* offset_args[] = {&device, &n, &offset};
  cudaKernelNodeParams scale = kernel_params(reinterpret_cast<void*>(graph_scale), 16, scale_args);
  cudaKernelNodeParams offset_params = kernel_params(reinterpret_cast<void*>(graph_offset), 16, offset_args);
  EXPECT(cudaGraphAddKernelNode(&scale_node, graph, &memset_node, 1, nullptr) == cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaGraphAddKernelNode(&scale_node, graph, &memset_node, 1, &scale));
  CHECK(cudaGraphAddKernelNode(&offset_node, graph, nullptr, 0, &offset_params));
  CHECK(cudaGraphAddDependencies(graph, &memset_node, &offset_node, nullptr, 1));
  // The same edge twice is an error.
  EXPECT(cudaGraphAddDependencies(graph, &memset_node, &offset_node, nullptr, 1) == cudaErrorInvalidValue);
  cudaGetLastError();

  cudaMemcpy3DParms copy{};
  copy.srcPtr = make_cudaPitchedPtr(device, kBytes, kBytes, 1);
  copy.dstPtr = make_cudaPitchedPtr(host.data(), kBytes, kBytes, 1);
  copy.extent = make_cudaExtent(kBytes, 1, 1);
  copy.kind = cudaMemcpyDeviceToHost;
  const cudaGraphNode_t both_kernels[] = {scale_node, offset_node};
  CHECK(cudaGraphAddMemcpyNode(&copy_node, graph, both_kernels, 2, &copy));
  cudaHostNodeParams host_params{check_copy, &check};
  CHECK(cudaGraphAddHostNode(&host_node, graph, &copy_node, 1, &host_params));
  CHECK(cudaGraphAddEmptyNode(&join_node, graph, &host_node, 1));

  size_t node_count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &node_count));
  EXPECT(node_count == 6);
  cudaGraphNodeType type;
  CHECK(cudaGraphNodeGetType(copy_node, &type));
  EXPECT(type == cudaGraphNodeTypeMemcpy);
  cudaKernelNodeParams read{};
  CHECK(cudaGraphKernelNodeGetParams(scale_node, &read));
  EXPECT(read.func == reinterpret_cast<void*>(graph_scale) && read.gridDim.x == 16 && read.blockDim.x == 256);

  // The clone keeps the parameters it was made with.
  cudaGraph_t clone = nullptr;
  CHECK(cudaGraphClone(&clone, graph));
  cudaKernelNodeParams wider = scale;
  wider.gridDim = dim3(32);
  CHECK(cudaGraphKernelNodeSetParams(scale_node, &wider));
  CHECK(cudaGraphKernelNodeGetParams(scale_node, &read));
  EXPECT(read.gridDim.x == 32);
  std::vector<cudaGraphNode_t> cloned(node_count);
  CHECK(cudaGraphGetNodes(clone, cloned.data(), &node_count));
  EXPECT(node_count == 6);
  cudaGraphNode_t cloned_scale = nullptr;
  for (cudaGraphNode_t node : cloned) {
    CHECK(cudaGraphNodeGetType(node, &type));
    if (type != cudaGraphNodeTypeKernel) continue;
    CHECK(cudaGraphKernelNodeGetParams(node, &read));
    if (read.func == reinterpret_cast<void*>(graph_scale)) cloned_scale = node;
  }
  EXPECT(cloned_scale != nullptr);
  CHECK(cudaGraphKernelNodeGetParams(cloned_scale, &read));
  EXPECT(read.gridDim.x == 16);

  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, clone, 0));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int launches = 3;
  for (int launch = 0; launch < launches; ++launch) {
    std::memset(host.data(), 0, kBytes);
    if (launch == 1) {
      cudaKernelNodeParams update = scale;
      update.gridDim = dim3(64);
      CHECK(cudaGraphExecKernelNodeSetParams(exec, cloned_scale, &update));
    }
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    EXPECT(check.calls == launch + 1);
    EXPECT(host[0] == 0x3c && host[kBytes - 1] == 0x3c);
  }
  EXPECT(check.good == launches);

  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(clone));
  CHECK(cudaGraphDestroy(graph));
  EXPECT(cudaGraphDestroy(graph) == cudaErrorInvalidValue);
  cudaGetLastError();
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(device));
  std::printf("graph_runtime: nodes=%zu launches=%d host_calls=%d ok\n", node_count, launches, check.calls);
}

// graphMemoryNodes' pattern: copies from and to pageable memory captured in
// the default (global) mode, then replayed; each replay reads the input as it
// is at that moment.
void capture_pageable_copies() {
  auto* input = static_cast<float*>(std::malloc(kBytes));
  auto* output = static_cast<float*>(std::malloc(kBytes));
  float* device = nullptr;
  CHECK(cudaMalloc(&device, kBytes));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaMemcpyAsync(device, input, kBytes, cudaMemcpyHostToDevice, stream));
  graph_scale<<<kElements / 256, 256, 0, stream>>>(device, kElements, 1.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(output, device, kBytes, cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamEndCapture(stream, &graph));
  size_t node_count = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &node_count));
  EXPECT(node_count == 3);

  cudaGraphExec_t exec = nullptr;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const int replays = 3;
  for (int replay = 0; replay < replays; ++replay) {
    for (int i = 0; i < kElements; ++i) input[i] = float(replay * 10000 + i);
    std::memset(output, 0, kBytes);
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    EXPECT(std::memcmp(output, input, kBytes) == 0);
  }
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(device));
  std::free(input);
  std::free(output);
  std::printf("graph_runtime: captured pageable copies nodes=%zu replays=%d ok\n", node_count, replays);
}

}  // namespace

int main(int argc, char** argv) {
  const char* part = "all";
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--part") == 0) part = argv[i + 1];
  const bool all = std::strcmp(part, "all") == 0;
  if (all || std::strcmp(part, "nodes") == 0) build_node_by_node();
  if (all || std::strcmp(part, "capture") == 0) capture_pageable_copies();
  return 0;
}
