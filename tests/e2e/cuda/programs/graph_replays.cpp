// A graph captured from a stream and replayed, the way torch.cuda.graphs and
// inference servers use them: `--shape same` captures the same kernel twice
// in a row (a graph of two nodes of one kernel); `--shape branches` forks
// the capture onto a second stream through an event and joins it back (a
// kernel on each branch, then one after the join). Replayed `--replays N`
// times (default 10). Prints what it did; exits 0.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr const char* kPtx = R"(
.version 8.0
.target sm_90
.address_size 64
.visible .entry replay_step()
{
  ret;
}
.visible .entry replay_left()
{
  ret;
}
.visible .entry replay_right()
{
  ret;
}
.visible .entry replay_join()
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

void launch(CUfunction kernel, CUstream stream) {
  check(cuLaunchKernel(kernel, 4, 1, 1, 64, 1, 1, 0, stream, nullptr, nullptr), "cuLaunchKernel");
}

}  // namespace

int main(int argc, char** argv) {
  std::string shape = "same";
  int replays = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--shape") == 0) shape = argv[i + 1];
    else if (std::strcmp(argv[i], "--replays") == 0) replays = std::atoi(argv[i + 1]);
  }
  check(cuInit(0), "cuInit");
  CUdevice device = 0;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context = nullptr;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, kPtx), "cuModuleLoadData");
  CUfunction step = nullptr, left = nullptr, right = nullptr, join = nullptr;
  check(cuModuleGetFunction(&step, module, "replay_step"), "cuModuleGetFunction");
  check(cuModuleGetFunction(&left, module, "replay_left"), "cuModuleGetFunction");
  check(cuModuleGetFunction(&right, module, "replay_right"), "cuModuleGetFunction");
  check(cuModuleGetFunction(&join, module, "replay_join"), "cuModuleGetFunction");

  CUstream stream = nullptr, side = nullptr;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuStreamCreate(&side, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUevent forked = nullptr, joined = nullptr;
  check(cuEventCreate(&forked, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  check(cuEventCreate(&joined, CU_EVENT_DISABLE_TIMING), "cuEventCreate");

  check(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), "cuStreamBeginCapture");
  if (shape == "branches") {
    check(cuEventRecord(forked, stream), "cuEventRecord");
    check(cuStreamWaitEvent(side, forked, 0), "cuStreamWaitEvent");
    launch(left, stream);
    launch(right, side);
    check(cuEventRecord(joined, side), "cuEventRecord");
    check(cuStreamWaitEvent(stream, joined, 0), "cuStreamWaitEvent");
    launch(join, stream);
  } else {
    launch(step, stream);
    launch(step, stream);
  }
  CUgraph graph = nullptr;
  check(cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  check(cuGraphInstantiateWithFlags(&exec, graph, 0), "cuGraphInstantiateWithFlags");
  for (int i = 0; i < replays; ++i) check(cuGraphLaunch(exec, stream), "cuGraphLaunch");
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");

  size_t nodes = 0;
  check(cuGraphGetNodes(graph, nullptr, &nodes), "cuGraphGetNodes");
  std::printf("graph_replays: shape=%s nodes=%zu replays=%d\n", shape.c_str(), nodes, replays);
  check(cuGraphExecDestroy(exec), "cuGraphExecDestroy");
  check(cuGraphDestroy(graph), "cuGraphDestroy");
  return 0;
}
