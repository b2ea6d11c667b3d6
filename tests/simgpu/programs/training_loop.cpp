// The bundled sample workload: a small MLP classifier trained the way a
// PyTorch training step reaches the GPU.
//
// Per step:
//   copy stream     pinned batch -> device (cudaMemcpyAsync), event recorded
//   compute stream  waits for the batch (cudaStreamWaitEvent), then
//     forward    GEMM (simblas) -> ReLU (<<<>>>) -> GEMM (simblas)
//                -> softmax cross-entropy (<<<>>>)
//     backward   GEMM dW2, GEMM dh, ReLU backward (<<<>>>), GEMM dW1
//     optimizer  one fused multi-tensor Adam kernel (<<<>>>)
//   activations are cudaMallocAsync'ed in forward and cudaFreeAsync'ed after
//   backward (allocation churn); every --sync-every steps the loss is read
//   back like loss.item() (D2H copy + stream synchronize).
//
// On the simulator each kernel takes a fixed modelled time, set here per
// kernel (10 us for the loss reset up to 2 ms for the largest GEMM, about
// 5 ms per step); on a real GPU the program runs unchanged and the costs are
// not set. Output: one summary line of counts on stdout (deterministic), the
// wall time and the last loss on stderr.
//
// usage: training_loop [--steps N=200] [--sync-every K=10]
#include <chrono>
#include <cstdio>
#include <vector>

#include "common/cuda_check.h"
#include "common/kernels.h"
#include "common/modelled_costs.h"
#include "common/options.h"
#include "simblas.h"

namespace {

// Column-major shapes: features x batch.
constexpr int kBatch = 256;
constexpr int kInputs = 512;
constexpr int kHidden = 2048;
constexpr int kClasses = 100;
constexpr size_t kBatchInputBytes = size_t(kInputs) * kBatch * sizeof(float);
constexpr size_t kBatchLabelBytes = kBatch * sizeof(int);

struct Counters {
  long gemms = 0;
  long runtime_kernels = 0;  // launched with <<<>>>
  long h2d_bytes = 0;
  long loss_reads = 0;
};

template <typename T>
T* device_array(size_t count) {
  T* data = nullptr;
  check_cuda(cudaMalloc(&data, count * sizeof(T)), "cudaMalloc");
  return data;
}

template <typename T>
T* pinned_array(size_t count) {
  T* data = nullptr;
  check_cuda(cudaMallocHost(&data, count * sizeof(T)), "cudaMallocHost");
  return data;
}

// Parameters, gradients and Adam moments live for the whole run.
struct Model {
  static constexpr int kW1 = kHidden * kInputs;
  static constexpr int kW2 = kClasses * kHidden;
  float* w1 = device_array<float>(kW1);
  float* w2 = device_array<float>(kW2);
  float* grad_w1 = device_array<float>(kW1);
  float* grad_w2 = device_array<float>(kW2);
  float* exp_avg[2] = {device_array<float>(kW1), device_array<float>(kW2)};
  float* exp_avg_sq[2] = {device_array<float>(kW1), device_array<float>(kW2)};
};

// Deterministic small weights, uploaded once (like loading a checkpoint).
void initialize(const Model& model, cudaStream_t stream, Counters* counters) {
  std::vector<float> w1(Model::kW1), w2(Model::kW2);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = float(int(i % 97) - 48) * 1e-3f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = float(int(i % 89) - 44) * 1e-3f;
  check_cuda(cudaMemcpy(model.w1, w1.data(), Model::kW1 * sizeof(float), cudaMemcpyHostToDevice),
             "H2D w1");
  check_cuda(cudaMemcpy(model.w2, w2.data(), Model::kW2 * sizeof(float), cudaMemcpyHostToDevice),
             "H2D w2");
  counters->h2d_bytes += long((Model::kW1 + Model::kW2) * sizeof(float));
  const int sizes[2] = {Model::kW1, Model::kW2};
  for (int t = 0; t < 2; ++t) {
    check_cuda(cudaMemsetAsync(model.exp_avg[t], 0, sizes[t] * sizeof(float), stream), "memset");
    check_cuda(cudaMemsetAsync(model.exp_avg_sq[t], 0, sizes[t] * sizeof(float), stream), "memset");
  }
}

// Two pinned staging slots used alternately. A slot may only be refilled once
// its previous H2D copy has finished, which is what PyTorch's pinned-memory
// allocator tracks with events.
struct BatchLoader {
  float* staged_inputs[2] = {pinned_array<float>(kInputs * kBatch),
                             pinned_array<float>(kInputs * kBatch)};
  int* staged_labels[2] = {pinned_array<int>(kBatch), pinned_array<int>(kBatch)};
  cudaEvent_t copied[2] = {};
  float* inputs = device_array<float>(size_t(kInputs) * kBatch);
  int* labels = device_array<int>(kBatch);

  BatchLoader() {
    for (cudaEvent_t& event : copied)
      check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  }

  // Stages batch `step` and makes `compute` wait for its arrival. The copy
  // itself waits until `compute` is done with the previous batch.
  void load(long step, cudaStream_t copy, cudaStream_t compute, Counters* counters) {
    const int slot = int(step % 2);
    check_cuda(cudaEventSynchronize(copied[slot]), "cudaEventSynchronize");
    for (int i = 0; i < kBatch * kInputs; ++i)
      staged_inputs[slot][i] = float((i * 7 + step * 13) % 101) * 0.01f;
    for (int b = 0; b < kBatch; ++b) staged_labels[slot][b] = int((b * 31 + step) % kClasses);

    cudaEvent_t previous_step_done = nullptr;
    check_cuda(cudaEventCreateWithFlags(&previous_step_done, cudaEventDisableTiming),
               "cudaEventCreate");
    check_cuda(cudaEventRecord(previous_step_done, compute), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(copy, previous_step_done, 0), "cudaStreamWaitEvent");
    check_cuda(cudaEventDestroy(previous_step_done), "cudaEventDestroy");
    check_cuda(cudaMemcpyAsync(inputs, staged_inputs[slot], kBatchInputBytes,
                               cudaMemcpyHostToDevice, copy),
               "H2D batch");
    check_cuda(cudaMemcpyAsync(labels, staged_labels[slot], kBatchLabelBytes,
                               cudaMemcpyHostToDevice, copy),
               "H2D labels");
    check_cuda(cudaEventRecord(copied[slot], copy), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(compute, copied[slot], 0), "cudaStreamWaitEvent");
    counters->h2d_bytes += long(kBatchInputBytes + kBatchLabelBytes);
  }
};

void sgemm(simblasHandle_t blas, simblasOperation_t ta, simblasOperation_t tb, int m, int n, int k,
           const float* a, int lda, const float* b, int ldb, float* c, Counters* counters) {
  const float one = 1.f, zero = 0.f;
  const simblasStatus_t status =
      simblasSgemm(blas, ta, tb, m, n, k, &one, a, lda, b, ldb, &zero, c, m);
  if (status != SIMBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: simblasSgemm failed: %s\n", simblasGetStatusString(status));
    std::exit(1);
  }
  ++counters->gemms;
}

// Forward and backward for one batch; activations come from, and go back
// to, the stream-ordered allocator.
void forward_backward(const Model& model, const BatchLoader& batch, float* loss,
                      simblasHandle_t blas, cudaStream_t compute, Counters* counters) {
  const size_t hidden_bytes = size_t(kHidden) * kBatch * sizeof(float);
  const size_t logits_bytes = size_t(kClasses) * kBatch * sizeof(float);
  float *pre_activation, *hidden, *logits, *grad_logits, *grad_hidden;
  check_cuda(cudaMallocAsync(&pre_activation, hidden_bytes, compute), "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&hidden, hidden_bytes, compute), "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&logits, logits_bytes, compute), "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&grad_logits, logits_bytes, compute), "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&grad_hidden, hidden_bytes, compute), "cudaMallocAsync");

  sgemm(blas, SIMBLAS_OP_N, SIMBLAS_OP_N, kHidden, kBatch, kInputs, model.w1, kHidden,
        batch.inputs, kInputs, pre_activation, counters);
  check_cuda(simtorch::relu(hidden, pre_activation, kHidden * kBatch, compute), "relu");
  sgemm(blas, SIMBLAS_OP_N, SIMBLAS_OP_N, kClasses, kBatch, kHidden, model.w2, kClasses, hidden,
        kHidden, logits, counters);
  check_cuda(simtorch::fill(loss, 1, 0.f, compute), "fill");
  check_cuda(simtorch::cross_entropy(logits, batch.labels, loss, grad_logits, kClasses, kBatch,
                                     compute),
             "cross_entropy");

  sgemm(blas, SIMBLAS_OP_N, SIMBLAS_OP_T, kClasses, kHidden, kBatch, grad_logits, kClasses, hidden,
        kHidden, model.grad_w2, counters);
  sgemm(blas, SIMBLAS_OP_T, SIMBLAS_OP_N, kHidden, kBatch, kClasses, model.w2, kClasses,
        grad_logits, kClasses, grad_hidden, counters);
  check_cuda(simtorch::relu_backward(grad_hidden, grad_hidden, pre_activation, kHidden * kBatch,
                                     compute),
             "relu_backward");
  sgemm(blas, SIMBLAS_OP_N, SIMBLAS_OP_T, kHidden, kInputs, kBatch, grad_hidden, kHidden,
        batch.inputs, kInputs, model.grad_w1, counters);
  counters->runtime_kernels += 4;

  for (float* activation : {pre_activation, hidden, logits, grad_logits, grad_hidden})
    check_cuda(cudaFreeAsync(activation, compute), "cudaFreeAsync");
}

void optimizer_step(const Model& model, long step, cudaStream_t compute, Counters* counters) {
  simtorch::AdamTensors tensors{};
  tensors.count = 2;
  tensors.params[0] = model.w1, tensors.grads[0] = model.grad_w1, tensors.sizes[0] = Model::kW1;
  tensors.params[1] = model.w2, tensors.grads[1] = model.grad_w2, tensors.sizes[1] = Model::kW2;
  for (int t = 0; t < 2; ++t) {
    tensors.exp_avg[t] = model.exp_avg[t];
    tensors.exp_avg_sq[t] = model.exp_avg_sq[t];
  }
  check_cuda(simtorch::adam_step(tensors, 1e-3f, int(step), compute), "adam_step");
  ++counters->runtime_kernels;
}

// Modelled kernel durations on the simulator (nothing to do on a real GPU).
// Returns false if the simulator refused one, e.g. an unknown host stub.
bool set_kernel_costs() {
  if (!running_on_simulator()) return true;
  const simtorch::KernelHostFunctions& k = simtorch::kernel_host_functions();
  bool ok = set_modelled_kernel_duration(k.fill, 10'000) &&
            set_modelled_kernel_duration(k.relu, 20'000) &&
            set_modelled_kernel_duration(k.relu_backward, 25'000) &&
            set_modelled_kernel_duration(k.cross_entropy, 40'000) &&
            set_modelled_kernel_duration(k.adam, 300'000);
  const auto gemm = [&](simblasOperation_t ta, simblasOperation_t tb, int m, int n, int k, long ns) {
    ok = ok && set_modelled_kernel_duration(simblasSgemmKernelName(ta, tb, m, n, k), ns);
  };
  gemm(SIMBLAS_OP_N, SIMBLAS_OP_N, kHidden, kBatch, kInputs, 1'200'000);   // forward 1
  gemm(SIMBLAS_OP_N, SIMBLAS_OP_N, kClasses, kBatch, kHidden, 120'000);    // forward 2
  gemm(SIMBLAS_OP_N, SIMBLAS_OP_T, kClasses, kHidden, kBatch, 150'000);    // dW2
  gemm(SIMBLAS_OP_T, SIMBLAS_OP_N, kHidden, kBatch, kClasses, 1'000'000);  // dh
  gemm(SIMBLAS_OP_N, SIMBLAS_OP_T, kHidden, kInputs, kBatch, 2'000'000);   // dW1
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options(argc, argv, {"--steps", "--sync-every"});
  const long steps = options.integer("--steps", 200);
  const long sync_every = options.integer("--sync-every", 10);
  if (steps < 1 || sync_every < 1) {
    std::fprintf(stderr, "error: --steps and --sync-every must be positive\n");
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();

  check_cuda(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t compute = nullptr, copy = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate");
  check_cuda(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), "cudaStreamCreate");
  simblasHandle_t blas = nullptr;
  if (simblasCreate(&blas) != SIMBLAS_STATUS_SUCCESS ||
      simblasSetStream(blas, compute) != SIMBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "error: simblasCreate failed\n");
    return 1;
  }
  if (!set_kernel_costs()) {
    std::fprintf(stderr, "error: the simulator did not accept the modelled kernel costs\n");
    return 1;
  }

  Counters counters;
  const Model model;
  initialize(model, compute, &counters);
  BatchLoader batches;
  float* loss = device_array<float>(1);
  float* loss_host = pinned_array<float>(1);
  *loss_host = 0.f;

  for (long step = 1; step <= steps; ++step) {
    batches.load(step, copy, compute, &counters);
    forward_backward(model, batches, loss, blas, compute, &counters);
    optimizer_step(model, step, compute, &counters);
    if (step % sync_every == 0 || step == steps) {  // loss.item()
      check_cuda(cudaMemcpyAsync(loss_host, loss, sizeof(float), cudaMemcpyDeviceToHost, compute),
                 "D2H loss");
      check_cuda(cudaStreamSynchronize(compute), "cudaStreamSynchronize");
      ++counters.loss_reads;
    }
  }
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  simblasDestroy(blas);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf("training_loop: steps=%ld gemms=%ld runtime_kernels=%ld loss_reads=%ld "
              "h2d_bytes=%ld ok\n",
              steps, counters.gemms, counters.runtime_kernels, counters.loss_reads,
              counters.h2d_bytes);
  std::fprintf(stderr, "training_loop: wall %.3f s, last loss %.4f\n", wall_s, double(*loss_host));
  return 0;
}
