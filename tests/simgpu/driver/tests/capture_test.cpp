// Stream capture and graphs as cuda.h documents them: captured work does not
// run and becomes nodes; events join streams into a capture; unjoined work
// fails the end; potentially unsafe calls invalidate captures according to
// the modes - including the profiler's hazard, another thread's cuEventQuery
// during a global-mode capture; a graph launch runs every node with its
// modelled duration, independent branches overlapping.
#include <cudaTypedefs.h>

#include <thread>
#include <vector>

#include "timing_kernels.h"

namespace {

using CaptureTest = TimingTest;

constexpr float kLongMs = kLongKernelNs / 1e6f;

CUstream new_stream() {
  CUstream stream = nullptr;
  EXPECT_EQ(CUDA_SUCCESS, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

TEST_F(CaptureTest, CapturedWorkDoesNotRunAndBecomesNodes) {
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  ASSERT_CU_OK(cuStreamIsCapturing(stream, &status));
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
  const int64_t start_ns = host_now_ns();
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  // Right after a captured call the capture depends on exactly its node.
  cuuint64_t id = 0;
  CUgraph graph_so_far = nullptr;
  const CUgraphNode* dependencies = nullptr;
  size_t count = 0;
  const CUgraphEdgeData* edges = nullptr;
  ASSERT_CU_OK(cuStreamGetCaptureInfo(stream, &status, &id, &graph_so_far, &dependencies, &edges, &count));
  ASSERT_EQ(count, 1u);
  const CUgraphNode launched = dependencies[0];
  ASSERT_CU_OK(launch(medium_kernel_, stream));
  CUgraph graph = nullptr;
  ASSERT_CU_OK(cuStreamEndCapture(stream, &graph));
  EXPECT_LT(host_now_ns() - start_ns, int64_t(kMediumKernelNs)) << "captured kernels must not run";
  EXPECT_EQ(graph, graph_so_far);
  EXPECT_NE(id, 0u);
  ASSERT_CU_OK(cuStreamIsCapturing(stream, &status));
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_NONE);

  size_t nodes = 0;
  ASSERT_CU_OK(cuGraphGetNodes(graph, nullptr, &nodes));
  ASSERT_EQ(nodes, 2u);
  std::vector<CUgraphNode> list(nodes);
  ASSERT_CU_OK(cuGraphGetNodes(graph, list.data(), &nodes));
  EXPECT_EQ(list[0], launched);
  CUgraphNodeType type;
  ASSERT_CU_OK(cuGraphNodeGetType(list[1], &type));
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_KERNEL);
  CUDA_KERNEL_NODE_PARAMS_v2 params{};
  ASSERT_CU_OK(cuGraphKernelNodeGetParams_v2(list[1], &params));
  EXPECT_EQ(params.func, medium_kernel_);
  EXPECT_EQ(params.blockDimX, 32u);
  size_t deps = 0;
  ASSERT_CU_OK(cuGraphNodeGetDependencies(list[1], nullptr, nullptr, &deps));
  EXPECT_EQ(deps, 1u);
  ASSERT_CU_OK(cuGraphDestroy(graph));
}

TEST_F(CaptureTest, AGraphLaunchRunsEveryNodeAndBranchesOverlap) {
  CUstream origin = new_stream(), side = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(origin, CU_STREAM_CAPTURE_MODE_GLOBAL));
  // Fork: the side stream joins through an event; both run a long kernel.
  CUevent fork = nullptr, join = nullptr;
  ASSERT_CU_OK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU_OK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU_OK(cuEventRecord(fork, origin));
  ASSERT_CU_OK(cuStreamWaitEvent(side, fork, 0));
  CUstreamCaptureStatus status;
  ASSERT_CU_OK(cuStreamIsCapturing(side, &status));
  EXPECT_EQ(status, CU_STREAM_CAPTURE_STATUS_ACTIVE) << "waiting for a captured event joins the capture";
  ASSERT_CU_OK(launch(long_kernel_, origin));
  ASSERT_CU_OK(launch(long_kernel_, side));
  ASSERT_CU_OK(cuEventRecord(join, side));
  ASSERT_CU_OK(cuStreamWaitEvent(origin, join, 0));
  CUgraph graph = nullptr;
  ASSERT_CU_OK(cuStreamEndCapture(origin, &graph));
  CUgraphExec exec = nullptr;
  ASSERT_CU_OK(cuGraphInstantiateWithFlags(&exec, graph, 0));

  CUstream run = new_stream();
  CUevent before = record(run);
  ASSERT_CU_OK(cuGraphLaunch(exec, run));
  CUevent after = record(run);
  ASSERT_CU_OK(cuStreamSynchronize(run));
  const float ms = elapsed_ms(before, after);
  EXPECT_GE(ms, kLongMs) << "the graph's kernels ran with their modelled durations";
  EXPECT_LT(ms, 2 * kLongMs - 20.0f) << "two independent branches overlap";
  ASSERT_CU_OK(cuGraphExecDestroy(exec));
  ASSERT_CU_OK(cuGraphDestroy(graph));
}

// graphMemoryNodes captures cudaMemcpyAsync from malloc()ed memory in global
// mode: the copy becomes a node that reads the host buffer when it runs.
TEST_F(CaptureTest, AnAsyncCopyOfPageableMemoryIsCaptured) {
  CUstream stream = new_stream();
  std::vector<int> input(1024), output(1024, 0);
  CUdeviceptr device = 0;
  ASSERT_CU_OK(cuMemAlloc(&device, input.size() * sizeof(int)));
  const size_t bytes = input.size() * sizeof(int);
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU_OK(cuMemcpyHtoDAsync(device, input.data(), bytes, stream));
  ASSERT_CU_OK(cuMemcpyDtoHAsync(output.data(), device, bytes, stream));
  CUgraph graph = nullptr;
  ASSERT_CU_OK(cuStreamEndCapture(stream, &graph));
  CUgraphExec exec = nullptr;
  ASSERT_CU_OK(cuGraphInstantiateWithFlags(&exec, graph, 0));
  for (size_t i = 0; i < input.size(); ++i) input[i] = int(i) * 3;
  ASSERT_CU_OK(cuGraphLaunch(exec, stream));
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(output, input);
  ASSERT_CU_OK(cuGraphExecDestroy(exec));
  ASSERT_CU_OK(cuGraphDestroy(graph));
  ASSERT_CU_OK(cuMemFree(device));
}

// cuda.h: cuStreamAddCallback is not supported with stream capture, unlike
// cuLaunchHostFunc.
TEST_F(CaptureTest, AStreamCallbackIsRefusedWhileCapturing) {
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  EXPECT_EQ(cuStreamAddCallback(stream, [](CUstream, CUresult, void*) {}, nullptr, 0),
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  ASSERT_CU_OK(cuLaunchHostFunc(stream, [](void*) {}, nullptr));
  CUgraph graph = nullptr;
  ASSERT_CU_OK(cuStreamEndCapture(stream, &graph));
  size_t nodes = 0;
  ASSERT_CU_OK(cuGraphGetNodes(graph, nullptr, &nodes));
  EXPECT_EQ(nodes, 1u);
  ASSERT_CU_OK(cuGraphDestroy(graph));
}

TEST_F(CaptureTest, UnjoinedWorkFailsTheEnd) {
  CUstream origin = new_stream(), side = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(origin, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUevent fork = nullptr;
  ASSERT_CU_OK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
  ASSERT_CU_OK(cuEventRecord(fork, origin));
  ASSERT_CU_OK(cuStreamWaitEvent(side, fork, 0));
  ASSERT_CU_OK(launch(short_kernel_, side));
  CUgraph graph = reinterpret_cast<CUgraph>(0x1);
  EXPECT_EQ(cuStreamEndCapture(origin, &graph), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
  EXPECT_EQ(graph, nullptr);
}

TEST_F(CaptureTest, SynchronizingTheCapturingStreamInvalidatesTheCapture) {
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_RELAXED));
  ASSERT_CU_OK(launch(short_kernel_, stream));
  EXPECT_EQ(cuStreamSynchronize(stream), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  EXPECT_EQ(launch(short_kernel_, stream), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CUgraph graph = nullptr;
  EXPECT_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  EXPECT_EQ(graph, nullptr);
}

// The hazard a profiler's background thread creates (pytorch#104487).
TEST_F(CaptureTest, AnotherThreadsEventQueryInvalidatesAGlobalCapture) {
  CUevent unrelated = record(new_stream());
  ASSERT_CU_OK(cuCtxSynchronize());
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU_OK(launch(short_kernel_, stream));
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuCtxGetCurrent(&context));
  CUresult query = CUDA_SUCCESS;
  std::thread([&] {
    cuCtxSetCurrent(context);
    query = cuEventQuery(unrelated);
  }).join();
  EXPECT_EQ(query, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph graph = nullptr;
  EXPECT_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

TEST_F(CaptureTest, ARelaxedThreadsEventQueryLeavesTheCaptureAlone) {
  CUevent unrelated = record(new_stream());
  ASSERT_CU_OK(cuCtxSynchronize());
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  ASSERT_CU_OK(launch(short_kernel_, stream));
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuCtxGetCurrent(&context));
  CUresult query = CUDA_ERROR_UNKNOWN;
  std::thread([&] {
    cuCtxSetCurrent(context);
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    cuThreadExchangeStreamCaptureMode(&mode);
    query = cuEventQuery(unrelated);
  }).join();
  EXPECT_EQ(query, CUDA_SUCCESS);
  CUgraph graph = nullptr;
  ASSERT_CU_OK(cuStreamEndCapture(stream, &graph));
  EXPECT_NE(graph, nullptr);
}

TEST_F(CaptureTest, AThreadLocalCaptureIgnoresOtherThreads) {
  CUevent unrelated = record(new_stream());
  ASSERT_CU_OK(cuCtxSynchronize());
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  ASSERT_CU_OK(launch(short_kernel_, stream));
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuCtxGetCurrent(&context));
  CUresult query = CUDA_ERROR_UNKNOWN;
  std::thread([&] {
    cuCtxSetCurrent(context);
    query = cuEventQuery(unrelated);
  }).join();
  EXPECT_EQ(query, CUDA_SUCCESS);
  // Its own thread is still refused, and that invalidates it.
  EXPECT_EQ(cuEventQuery(unrelated), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CUgraph graph = nullptr;
  EXPECT_EQ(cuStreamEndCapture(stream, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

TEST_F(CaptureTest, TheLegacyStreamDuringACaptureOfABlockingStreamIsImplicit) {
  CUstream blocking = nullptr;
  ASSERT_CU_OK(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  ASSERT_CU_OK(cuStreamBeginCapture_v2(blocking, CU_STREAM_CAPTURE_MODE_RELAXED));
  EXPECT_EQ(launch(short_kernel_, nullptr), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  CUgraph graph = nullptr;
  EXPECT_EQ(cuStreamEndCapture(blocking, &graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

TEST_F(CaptureTest, EndingFromAnotherThreadIsTheWrongThread) {
  CUstream stream = new_stream();
  ASSERT_CU_OK(cuStreamBeginCapture_v2(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuCtxGetCurrent(&context));
  CUresult ended = CUDA_SUCCESS;
  CUgraph graph = nullptr;
  std::thread([&] {
    cuCtxSetCurrent(context);
    ended = cuStreamEndCapture(stream, &graph);
  }).join();
  EXPECT_EQ(ended, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
  ASSERT_CU_OK(cuStreamEndCapture(stream, &graph));
}

}  // namespace

namespace {

using GraphBuildTest = TimingTest;

void count_call(void* calls) { ++*static_cast<int*>(calls); }

TEST_F(GraphBuildTest, NodesBuiltOneByOneRunInOrderWithTheirEffects) {
  CUdeviceptr buffer = 0;
  ASSERT_CU_OK(cuMemAlloc(&buffer, 4096));
  CUgraph graph = nullptr, child = nullptr;
  ASSERT_CU_OK(cuGraphCreate(&graph, 0));
  ASSERT_CU_OK(cuGraphCreate(&child, 0));
  CUDA_MEMSET_NODE_PARAMS memset_params{};
  memset_params.dst = buffer;
  memset_params.value = 0x7;
  memset_params.elementSize = 1;
  memset_params.width = 4096;
  memset_params.height = 1;
  CUcontext context = nullptr;
  ASSERT_CU_OK(cuCtxGetCurrent(&context));
  CUgraphNode memset_node = nullptr, kernel = nullptr, host = nullptr, nested = nullptr, child_kernel = nullptr;
  ASSERT_CU_OK(cuGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &memset_params, context));
  CUDA_KERNEL_NODE_PARAMS params{};
  params.func = medium_kernel_;
  params.gridDimX = params.gridDimY = params.gridDimZ = 1;
  params.blockDimX = 32, params.blockDimY = params.blockDimZ = 1;
  ASSERT_CU_OK(cuGraphAddKernelNode(&kernel, graph, &memset_node, 1, &params));
  int calls = 0;
  CUDA_HOST_NODE_PARAMS host_params{count_call, &calls};
  ASSERT_CU_OK(cuGraphAddHostNode(&host, graph, &kernel, 1, &host_params));
  ASSERT_CU_OK(cuGraphAddKernelNode(&child_kernel, child, nullptr, 0, &params));
  ASSERT_CU_OK(cuGraphAddChildGraphNode(&nested, graph, &host, 1, child));

  CUgraphNodeType type;
  ASSERT_CU_OK(cuGraphNodeGetType(nested, &type));
  EXPECT_EQ(type, CU_GRAPH_NODE_TYPE_GRAPH);
  CUgraph embedded = nullptr;
  ASSERT_CU_OK(cuGraphChildGraphNodeGetGraph(nested, &embedded));
  size_t embedded_nodes = 0;
  ASSERT_CU_OK(cuGraphGetNodes(embedded, nullptr, &embedded_nodes));
  EXPECT_EQ(embedded_nodes, 1u);
  EXPECT_NE(embedded, child) << "the child graph is embedded as a clone";

  CUgraphExec exec = nullptr;
  ASSERT_CU_OK(cuGraphInstantiateWithFlags(&exec, graph, 0));
  CUstream stream = new_stream();
  CUevent before = record(stream);
  ASSERT_CU_OK(cuGraphLaunch(exec, stream));
  CUevent after = record(stream);
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  EXPECT_EQ(calls, 1);
  EXPECT_GE(elapsed_ms(before, after), 2 * kMediumKernelNs / 1e6f) << "the kernel and the child's kernel, in order";
  std::vector<unsigned char> back(4096);
  ASSERT_CU_OK(cuMemcpyDtoH(back.data(), buffer, back.size()));
  EXPECT_EQ(back, std::vector<unsigned char>(4096, 0x7));

  // The executable graph's kernel swapped for a short one: shorter replays.
  params.func = short_kernel_;
  ASSERT_CU_OK(cuGraphExecKernelNodeSetParams(exec, kernel, &params));
  before = record(stream);
  ASSERT_CU_OK(cuGraphLaunch(exec, stream));
  after = record(stream);
  ASSERT_CU_OK(cuStreamSynchronize(stream));
  const float swapped_ms = elapsed_ms(before, after);
  EXPECT_GE(swapped_ms, (kMediumKernelNs + kShortKernelNs) / 1e6f);
  EXPECT_LT(swapped_ms, (2 * kMediumKernelNs) / 1e6f);

  // Update from a graph of the same shape succeeds; another shape does not.
  CUgraphExecUpdateResultInfo info{};
  ASSERT_CU_OK(cuGraphExecUpdate(exec, graph, &info));
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_SUCCESS);
  CUgraphNode extra = nullptr;
  ASSERT_CU_OK(cuGraphAddEmptyNode(&extra, graph, &nested, 1));
  EXPECT_EQ(cuGraphExecUpdate(exec, graph, &info), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
  EXPECT_EQ(info.result, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);

  ASSERT_CU_OK(cuGraphExecDestroy(exec));
  ASSERT_CU_OK(cuGraphDestroy(child));
  ASSERT_CU_OK(cuGraphDestroy(graph));
  ASSERT_CU_OK(cuMemFree(buffer));
}

}  // namespace
