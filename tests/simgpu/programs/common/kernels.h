// Device kernels shared by the target programs, launched with <<<>>> from
// kernels.cu (compiled by nvcc), so every launch goes through the nvcc host
// stubs and the runtime's __cudaLaunchKernel, exactly as in a real program.
// Their device names are shaped like PyTorch's: templated elementwise
// kernels over functors, a per-row loss kernel, a multi-tensor optimizer.
#ifndef SIMGPU_PROGRAMS_KERNELS_H
#define SIMGPU_PROGRAMS_KERNELS_H

#include <cuda_runtime_api.h>

#include <cstddef>

namespace simtorch {

// Each returns the launch's cudaGetLastError().
cudaError_t fill(float* data, int count, float value, cudaStream_t stream);
// out = a + alpha * b
cudaError_t add(float* out, const float* a, const float* b, float alpha, int count,
                cudaStream_t stream);
// out = max(in, 0)
cudaError_t relu(float* out, const float* in, int count, cudaStream_t stream);
// grad_in = activation > 0 ? grad_out : 0 (PyTorch's threshold_backward)
cudaError_t relu_backward(float* grad_in, const float* grad_out, const float* activation, int count,
                          cudaStream_t stream);
// Softmax cross-entropy over column-major logits (classes x batch): writes
// the mean loss to *loss and d(loss)/d(logits) to grad_logits.
cudaError_t cross_entropy(const float* logits, const int* labels, float* loss, float* grad_logits,
                          int classes, int batch, cudaStream_t stream);

// Adam over up to kAdamMaxTensors parameter tensors in one launch, the way
// PyTorch's fused multi_tensor_apply optimizers do.
constexpr int kAdamMaxTensors = 4;
struct AdamTensors {
  float* params[kAdamMaxTensors];
  const float* grads[kAdamMaxTensors];
  float* exp_avg[kAdamMaxTensors];
  float* exp_avg_sq[kAdamMaxTensors];
  int sizes[kAdamMaxTensors];
  int count;
};
cudaError_t adam_step(const AdamTensors& tensors, float learning_rate, int step,
                      cudaStream_t stream);

// Host stubs of the kernels above (what cudaGetFuncBySymbol and
// cudaFuncGetName take), so callers can ask the runtime about them, e.g. to
// set the simulator's modelled cost per kernel.
struct KernelHostFunctions {
  const void* fill;
  const void* add;
  const void* relu;
  const void* relu_backward;
  const void* cross_entropy;
  const void* adam;
};
const KernelHostFunctions& kernel_host_functions();

}  // namespace simtorch

#endif
