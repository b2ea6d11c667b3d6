// A training step captured into a CUDA graph and replayed, the way
// torch.cuda.graphs works:
//   1. warm up a few steps eagerly on a side stream;
//   2. capture one whole step on a capture stream - the input copy from a
//      pinned staging buffer, a GEMM through simblas, the activation taken
//      from and given back to the stream-ordered allocator (cudaMallocAsync,
//      cudaFreeAsync: graph memory nodes once captured), ReLU, a loss fill, a
//      fused Adam kernel - in the mode --capture-mode picks;
//   3. replay it --replays times, writing fresh inputs into the staging
//      buffer before each replay (the captured copy re-reads it).
// --threads 2 runs two such captures and replays at once, one per thread.
// --invalidate makes a capture fail on purpose (it synchronizes the
// capturing stream) and prints the errors it got.
// --capture-pause-ms N pauses N ms in the middle of the capture (Python's
// own time in a real capture) while eager work is still running on the side
// stream: a profiler that queries that work's events from a thread in the
// default capture mode would invalidate the capture in that window.
//
// Output is deterministic: the graph's node count, the replays done, and a
// checksum of the device inputs read back after every replay (the kernels
// of the simulator take modelled time and do not compute; the copies are
// real, so the checksum proves each replay copied that replay's inputs).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/modelled_costs.h"
#include "common/options.h"
#include "simblas.h"

namespace {

constexpr int kInputs = 256;
constexpr int kHidden = 512;
constexpr int kBatch = 64;

struct Result {
  size_t nodes = 0;
  long replays = 0;
  unsigned long long checksum = 0;
};

template <typename T>
T* device_array(size_t count) {
  T* data = nullptr;
  check_cuda(cudaMalloc(&data, count * sizeof(T)), "cudaMalloc");
  return data;
}

void fill_inputs(float* staging, long replay) {
  for (int i = 0; i < kInputs * kBatch; ++i) staging[i] = float((i * 7 + replay * 13) % 101);
}

// One step: what the graph holds.
void step(simblasHandle_t blas, cudaStream_t stream, float* staging, float* inputs, float* w1, float* pre,
          float* loss, const simtorch::AdamTensors& adam) {
  check_cuda(cudaMemcpyAsync(inputs, staging, size_t(kInputs) * kBatch * sizeof(float), cudaMemcpyHostToDevice,
                             stream),
             "H2D inputs");
  const float one = 1.f, zero = 0.f;
  if (simblasSgemm(blas, SIMBLAS_OP_N, SIMBLAS_OP_N, kHidden, kBatch, kInputs, &one, w1, kHidden, inputs, kInputs,
                   &zero, pre, kHidden) != SIMBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: simblasSgemm failed\n");
    std::exit(1);
  }
  float* hidden = nullptr;
  check_cuda(cudaMallocAsync(&hidden, size_t(kHidden) * kBatch * sizeof(float), stream), "cudaMallocAsync");
  check_cuda(simtorch::relu(hidden, pre, kHidden * kBatch, stream), "relu");
  check_cuda(simtorch::fill(loss, 1, 0.f, stream), "fill");
  check_cuda(simtorch::adam_step(adam, 1e-3f, 1, stream), "adam_step");
  check_cuda(cudaFreeAsync(hidden, stream), "cudaFreeAsync");
}

cudaStreamCaptureMode parse_mode(const std::string& text) {
  if (text == "global") return cudaStreamCaptureModeGlobal;
  if (text == "thread_local") return cudaStreamCaptureModeThreadLocal;
  if (text == "relaxed") return cudaStreamCaptureModeRelaxed;
  std::fprintf(stderr, "error: --capture-mode must be global, thread_local or relaxed\n");
  std::exit(2);
}

Result run(cudaStreamCaptureMode mode, long replays, bool invalidate, long pause_ms) {
  Result result;
  cudaStream_t side = nullptr, capture = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking), "cudaStreamCreate");
  simblasHandle_t blas = nullptr;
  if (simblasCreate(&blas) != SIMBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: simblasCreate failed\n");
    std::exit(1);
  }
  float* staging = nullptr;
  check_cuda(cudaMallocHost(&staging, size_t(kInputs) * kBatch * sizeof(float)), "cudaMallocHost");
  float* inputs = device_array<float>(size_t(kInputs) * kBatch);
  float* w1 = device_array<float>(size_t(kHidden) * kInputs);
  float* pre = device_array<float>(size_t(kHidden) * kBatch);
  float* loss = device_array<float>(1);
  float* exp_avg = device_array<float>(size_t(kHidden) * kInputs);
  float* exp_avg_sq = device_array<float>(size_t(kHidden) * kInputs);
  float* grad = device_array<float>(size_t(kHidden) * kInputs);
  simtorch::AdamTensors adam{};
  adam.count = 1;
  adam.params[0] = w1, adam.grads[0] = grad, adam.sizes[0] = kHidden * kInputs;
  adam.exp_avg[0] = exp_avg, adam.exp_avg_sq[0] = exp_avg_sq;

  // 1. Warm-up, eager, on the side stream.
  simblasSetStream(blas, side);
  for (long i = 0; i < 2; ++i) {
    fill_inputs(staging, -1 - i);
    step(blas, side, staging, inputs, w1, pre, loss, adam);
    check_cuda(cudaStreamSynchronize(side), "cudaStreamSynchronize");
  }

  // Eager work still in flight on the side stream while the capture runs.
  for (int i = 0; i < 4; ++i) check_cuda(simtorch::adam_step(adam, 1e-3f, 2, side), "adam_step");

  // 2. Capture one step.
  simblasSetStream(blas, capture);
  check_cuda(cudaStreamBeginCapture(capture, mode), "cudaStreamBeginCapture");
  if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  if (invalidate) {
    const cudaError_t sync = cudaStreamSynchronize(capture);  // not allowed while capturing
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(capture, &graph);
    (void)cudaGetLastError();
    std::printf("graph_training: invalidated on purpose: synchronize %s, end capture %s, graph %s\n",
                cudaGetErrorName(sync), cudaGetErrorName(end), graph == nullptr ? "none" : "made");
    simblasDestroy(blas);
    return result;
  }
  step(blas, capture, staging, inputs, w1, pre, loss, adam);
  if (pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamEndCapture(capture, &graph), "cudaStreamEndCapture");
  check_cuda(cudaGraphGetNodes(graph, nullptr, &result.nodes), "cudaGraphGetNodes");
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

  // 3. Replays with fresh inputs.
  std::vector<float> readback(size_t(kInputs) * kBatch);
  for (long replay = 0; replay < replays; ++replay) {
    fill_inputs(staging, replay);
    check_cuda(cudaGraphLaunch(exec, capture), "cudaGraphLaunch");
    check_cuda(cudaStreamSynchronize(capture), "cudaStreamSynchronize");
    check_cuda(cudaMemcpy(readback.data(), inputs, readback.size() * sizeof(float), cudaMemcpyDeviceToHost),
               "D2H inputs");
    for (float value : readback) result.checksum = result.checksum * 31 + (unsigned long long)(value);
    ++result.replays;
  }
  check_cuda(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check_cuda(cudaGraphDestroy(graph), "cudaGraphDestroy");
  check_cuda(cudaStreamSynchronize(side), "cudaStreamSynchronize");
  simblasDestroy(blas);
  return result;
}

bool set_kernel_costs() {
  if (!running_on_simulator()) return true;
  const simtorch::KernelHostFunctions& k = simtorch::kernel_host_functions();
  return set_modelled_kernel_duration(k.fill, 10'000) && set_modelled_kernel_duration(k.relu, 20'000) &&
         set_modelled_kernel_duration(k.adam, 200'000) &&
         set_modelled_kernel_duration(
             simblasSgemmKernelName(SIMBLAS_OP_N, SIMBLAS_OP_N, kHidden, kBatch, kInputs), 500'000);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--capture-mode", "--replays", "--threads", "--invalidate", "--capture-pause-ms"});
  const std::string mode_text = options.text("--capture-mode", "global");
  const cudaStreamCaptureMode mode = parse_mode(mode_text);
  const long replays = options.integer("--replays", 5);
  const long threads = options.integer("--threads", 1);
  const bool invalidate = options.integer("--invalidate", 0) != 0;
  const long pause_ms = options.integer("--capture-pause-ms", 0);
  if (replays < 1 || threads < 1 || threads > 8) {
    std::fprintf(stderr, "error: --replays must be positive and --threads 1 to 8\n");
    return 2;
  }
  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  if (!set_kernel_costs()) {
    std::fprintf(stderr, "error: the simulator did not accept the modelled kernel costs\n");
    return 1;
  }
  std::vector<Result> results(static_cast<size_t>(threads));
  if (threads == 1) {
    results[0] = run(mode, replays, invalidate, pause_ms);
  } else {
    std::vector<std::thread> workers;
    for (long t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        check_cuda(cudaSetDevice(0), "cudaSetDevice");
        results[size_t(t)] = run(mode, replays, invalidate, pause_ms);
      });
    for (std::thread& worker : workers) worker.join();
  }
  if (invalidate) return 0;
  for (size_t t = 0; t < results.size(); ++t)
    std::printf("graph_training: thread %zu mode=%s nodes=%zu replays=%ld checksum=%llu\n", t, mode_text.c_str(),
                results[t].nodes, results[t].replays, results[t].checksum);
  return 0;
}
