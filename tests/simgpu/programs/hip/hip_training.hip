// A HIP training loop, built with Debian's hipcc (device code for gfx90a),
// for the profiler's AMD tests and `scripts/run-sample.sh --hip`.
//
//   hip_training [--steps N] [--threads N] [--fork] [--module FILE] [--graph] [--callback]
//
// Each step: the batch is copied in (pinned host memory, async), a forward
// pass of three layers (matmul, bias+relu), a loss (softmax), the loss
// copied out, a backward pass and an optimizer step on a second stream that
// waits for the backward one; activations come from hipMallocAsync and go
// back with hipFreeAsync. Kernels only take time on the simulator: set
// their costs with SIMGPU_KERNEL_COSTS.
//   --threads N  N host threads, each with its own stream, run the loop
//   --fork       forks a worker before touching HIP; parent and child both
//                run the loop and the parent reports the child's status
//   --module F   also loads F (a code object or bundle) with hipModuleLoad
//                and launches its first kernel `scale` through hipModuleLaunchKernel
//   --callback   ends each step's update with hipStreamAddCallback(step_done)
//   --graph      captures one step (copy in, forward, loss out, backward) into
//                a graph with hipStreamBeginCapture in global mode, and
//                replays it with hipGraphLaunch --steps times
#include <hip/hip_ext.h>
#include <hip/hip_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    hipError_t error_ = (call);                                                            \
    if (error_ != hipSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, hipGetErrorName(error_)); \
      std::exit(2);                                                                        \
    }                                                                                      \
  } while (0)

constexpr int kWidth = 256;
constexpr int kBatch = 64;

// The learning rate as a __device__ variable, set once with hipMemcpyToSymbol
// and read back with hipMemcpyFromSymbol (run_loop checks the round trip).
__device__ float learning_rate;

__global__ void matmul(const float* a, const float* w, float* out, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float sum = 0;
  for (int k = 0; k < n; ++k) sum += a[row * n + k] * w[k * n + col];
  out[row * n + col] = sum;
}

__global__ void bias_relu(float* x, const float* bias, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = fmaxf(x[i] + bias[i % kWidth], 0.0f);
}

__global__ void softmax_loss(const float* logits, float* loss, int n) {
  float sum = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += expf(logits[i]);
  if (threadIdx.x == 0) *loss = logf(sum);
}

__global__ void backward(const float* grad, float* weights, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) weights[i] -= 0.001f * grad[i];
}

__global__ void sgd_update(float* weights, const float* grad, float lr, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) weights[i] -= lr * grad[i];
}

struct Options {
  int steps = 20;
  int threads = 0;
  bool fork_worker = false;
  const char* module = nullptr;
  bool graph = false;
  bool callback = false;
};

bool g_callback = false;
int g_steps_done = 0;

// A host function the update stream runs at the end of each step.
void step_done(hipStream_t, hipError_t status, void* counter) {
  if (status == hipSuccess) ++*static_cast<int*>(counter);
}

// One step captured into a graph and replayed: buffers allocated up front.
float run_graph(int steps) {
  const size_t matrix = size_t(kWidth) * kWidth * sizeof(float);
  const size_t batch = size_t(kBatch) * kWidth * sizeof(float);
  hipStream_t stream;
  CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));
  float *weights[3], *bias, *grad, *input, *activation, *loss_device, *host_batch, *host_loss;
  for (float*& w : weights) CHECK(hipMalloc(&w, matrix));
  CHECK(hipMalloc(&bias, kWidth * sizeof(float)));
  CHECK(hipMalloc(&grad, matrix));
  CHECK(hipMalloc(&input, batch));
  CHECK(hipMalloc(&activation, batch));
  CHECK(hipMalloc(&loss_device, sizeof(float)));
  CHECK(hipHostMalloc(&host_batch, batch, hipHostMallocDefault));
  CHECK(hipHostMalloc(&host_loss, sizeof(float), hipHostMallocDefault));
  std::memset(host_batch, 0, batch);
  const dim3 tile(16, 16), grid(kWidth / 16, kBatch / 16);
  const int elements = kBatch * kWidth, threads = 256;

  CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeGlobal));
  CHECK(hipMemcpyAsync(input, host_batch, batch, hipMemcpyHostToDevice, stream));
  float* x = input;
  for (float* w : weights) {
    hipLaunchKernelGGL(matmul, grid, tile, 0, stream, x, w, activation, kWidth);
    bias_relu<<<(elements + threads - 1) / threads, threads, 0, stream>>>(activation, bias, elements);
    x = activation;
  }
  softmax_loss<<<1, 256, 0, stream>>>(activation, loss_device, elements);
  CHECK(hipMemcpyAsync(host_loss, loss_device, sizeof(float), hipMemcpyDeviceToHost, stream));
  for (int layer = 2; layer >= 0; --layer)
    backward<<<(kWidth * kWidth + threads - 1) / threads, threads, 0, stream>>>(grad, weights[layer], kWidth * kWidth);
  hipGraph_t graph;
  CHECK(hipStreamEndCapture(stream, &graph));
  hipGraphExec_t exec;
  CHECK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  float total = 0;
  for (int step = 0; step < steps; ++step) {
    CHECK(hipGraphLaunch(exec, stream));
    CHECK(hipStreamSynchronize(stream));
    total += *host_loss;
  }
  CHECK(hipGraphExecDestroy(exec));
  CHECK(hipGraphDestroy(graph));
  for (float* w : weights) CHECK(hipFree(w));
  for (float* p : {bias, grad, input, activation, loss_device}) CHECK(hipFree(p));
  CHECK(hipHostFree(host_batch));
  CHECK(hipHostFree(host_loss));
  CHECK(hipStreamDestroy(stream));
  return total;
}

float run_loop(int steps, const char* module_path) {
  const size_t matrix = size_t(kWidth) * kWidth * sizeof(float);
  const size_t batch = size_t(kBatch) * kWidth * sizeof(float);
  hipStream_t compute, update;
  CHECK(hipStreamCreateWithFlags(&compute, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&update, hipStreamNonBlocking));
  hipEvent_t backward_done;
  CHECK(hipEventCreateWithFlags(&backward_done, hipEventDisableTiming));
  float *weights[3], *bias, *grad, *loss_device;
  for (float*& w : weights) CHECK(hipMalloc(&w, matrix));
  CHECK(hipMalloc(&bias, kWidth * sizeof(float)));
  CHECK(hipMalloc(&grad, matrix));
  CHECK(hipMalloc(&loss_device, sizeof(float)));
  for (float* w : weights) CHECK(hipMemset(w, 0, matrix));
  CHECK(hipMemsetAsync(bias, 0, kWidth * sizeof(float), compute));
  float *host_batch, *host_loss;
  CHECK(hipHostMalloc(&host_batch, batch, hipHostMallocDefault));
  CHECK(hipHostMalloc(&host_loss, sizeof(float), hipHostMallocDefault));
  std::memset(host_batch, 0, batch);
  const float rate = 0.01f;
  float rate_back = 0;
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(learning_rate), &rate, sizeof rate, 0, hipMemcpyHostToDevice));
  CHECK(hipMemcpyFromSymbol(&rate_back, HIP_SYMBOL(learning_rate), sizeof rate_back, 0, hipMemcpyDeviceToHost));
  if (rate_back != rate) {
    std::fprintf(stderr, "hip_training: the learning rate did not round-trip\n");
    std::exit(4);
  }

  hipFunction_t scale = nullptr;
  hipModule_t module = nullptr;
  if (module_path != nullptr) {
    CHECK(hipModuleLoad(&module, module_path));
    CHECK(hipModuleGetFunction(&scale, module, "scale"));
  }

  const dim3 tile(16, 16), grid(kWidth / 16, kBatch / 16);
  const int elements = kBatch * kWidth, threads = 256;
  float total = 0;
  for (int step = 0; step < steps; ++step) {
    float *input, *activation;
    CHECK(hipMallocAsync(reinterpret_cast<void**>(&input), batch, compute));
    CHECK(hipMallocAsync(reinterpret_cast<void**>(&activation), batch, compute));
    CHECK(hipMemcpyAsync(input, host_batch, batch, hipMemcpyHostToDevice, compute));
    float* x = input;
    for (float* w : weights) {
      hipLaunchKernelGGL(matmul, grid, tile, 0, compute, x, w, activation, kWidth);
      bias_relu<<<(elements + threads - 1) / threads, threads, 0, compute>>>(activation, bias, elements);
      x = activation;
    }
    softmax_loss<<<1, 256, 0, compute>>>(activation, loss_device, elements);
    CHECK(hipGetLastError());
    CHECK(hipMemcpyAsync(host_loss, loss_device, sizeof(float), hipMemcpyDeviceToHost, compute));
    for (int layer = 2; layer >= 0; --layer)
      backward<<<(kWidth * kWidth + threads - 1) / threads, threads, 0, compute>>>(grad, weights[layer], kWidth * kWidth);
    CHECK(hipEventRecord(backward_done, compute));
    CHECK(hipStreamWaitEvent(update, backward_done, 0));
    for (float* w : weights)
      sgd_update<<<(kWidth * kWidth + threads - 1) / threads, threads, 0, update>>>(w, grad, 0.01f, kWidth * kWidth);
    if (scale != nullptr) {
      int count = elements;
      void* args[] = {&grad, &count};
      CHECK(hipModuleLaunchKernel(scale, (elements + threads - 1) / threads, 1, 1, threads, 1, 1, 0, update, args,
                                  nullptr));
    }
    if (g_callback) CHECK(hipStreamAddCallback(update, step_done, &g_steps_done, 0));
    CHECK(hipFreeAsync(input, compute));
    CHECK(hipFreeAsync(activation, compute));
    CHECK(hipStreamSynchronize(compute));
    total += *host_loss;
  }
  CHECK(hipStreamSynchronize(update));
  if (g_callback && g_steps_done != steps) {
    std::fprintf(stderr, "hip_training: %d of %d step callbacks ran\n", g_steps_done, steps);
    std::exit(6);
  }
  // Two more launch paths once per run: AMD's extension with its own
  // start/stop events, and a cooperative launch.
  {
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    hipExtLaunchKernelGGL(bias_relu, dim3((elements + threads - 1) / threads), dim3(threads), 0, compute, start, stop,
                          0, grad, bias, elements);
    CHECK(hipGetLastError());
    int count = elements;
    void* args[] = {&grad, &bias, &count};
    CHECK(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(&bias_relu), dim3(4), dim3(threads), args, 0,
                                     compute));
    CHECK(hipEventSynchronize(stop));
    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    if (ms < 0) std::exit(5);
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
  }
  CHECK(hipDeviceSynchronize());
  if (module != nullptr) CHECK(hipModuleUnload(module));
  CHECK(hipHostFree(host_batch));
  CHECK(hipHostFree(host_loss));
  for (float* w : weights) CHECK(hipFree(w));
  CHECK(hipFree(bias));
  CHECK(hipFree(grad));
  CHECK(hipFree(loss_device));
  CHECK(hipEventDestroy(backward_done));
  CHECK(hipStreamDestroy(compute));
  CHECK(hipStreamDestroy(update));
  return total;
}

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) options.steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) options.threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--fork")) options.fork_worker = true;
    else if (!std::strcmp(argv[i], "--module") && i + 1 < argc) options.module = argv[++i];
    else if (!std::strcmp(argv[i], "--graph")) options.graph = true;
    else if (!std::strcmp(argv[i], "--callback")) g_callback = options.callback = true;
    else {
      std::fprintf(stderr, "usage: %s [--steps N] [--threads N] [--fork] [--module FILE] [--graph] [--callback]\n",
                   argv[0]);
      return 64;
    }
  }
  pid_t child = -1;
  if (options.fork_worker) {
    child = fork();
    if (child < 0) return 3;
  }
  if (options.graph) {
    run_graph(options.steps);
  } else if (options.threads > 0) {
    std::vector<std::thread> threads;
    for (int t = 0; t < options.threads; ++t) threads.emplace_back([&] { run_loop(options.steps, nullptr); });
    for (std::thread& t : threads) t.join();
  } else {
    run_loop(options.steps, options.module);
  }
  hipDeviceProp_t props;
  CHECK(hipGetDeviceProperties(&props, 0));
  if (child == 0) {
    std::printf("hip_training: worker done on %s\n", props.gcnArchName);
    std::fflush(stdout);
    _exit(0);
  }
  if (child > 0) {
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("hip_training: worker exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  std::printf("hip_training: %d steps on %s (%s)\n", options.steps, props.name, props.gcnArchName);
  return 0;
}
