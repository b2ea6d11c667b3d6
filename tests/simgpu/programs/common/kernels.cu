#include <math.h>

#include "kernels.h"

namespace simtorch {

// Pointer bundle passed by value, like at::detail::Array<char*, N>.
template <typename T, int N>
struct Array {
  T data[N];
};

template <typename T>
struct FillFunctor {
  T value;
  __device__ void operator()(int i, Array<T*, 1> p) const { p.data[0][i] = value; }
};

template <typename T>
struct AddFunctor {
  T alpha;
  __device__ void operator()(int i, Array<T*, 3> p) const {
    p.data[0][i] = p.data[1][i] + alpha * p.data[2][i];
  }
};

template <typename T>
struct ReluFunctor {
  __device__ void operator()(int i, Array<T*, 2> p) const {
    p.data[0][i] = p.data[1][i] > T(0) ? p.data[1][i] : T(0);
  }
};

template <typename T>
struct ThresholdBackwardFunctor {
  __device__ void operator()(int i, Array<T*, 3> p) const {
    p.data[0][i] = p.data[2][i] > T(0) ? p.data[1][i] : T(0);
  }
};

// vec_size elements per thread, grid-stride: the kernel family behind most
// of PyTorch's pointwise ops.
template <int vec_size, typename func_t, typename array_t>
__global__ void vectorized_elementwise_kernel(int N, func_t f, array_t data) {
  const int base = (blockIdx.x * blockDim.x + threadIdx.x) * vec_size;
  for (int v = 0; v < vec_size; ++v)
    if (base + v < N) f(base + v, data);
}

// One block per sample (a column of the column-major logits).
template <typename T, int BLOCK>
__global__ void cross_entropy_loss_forward_backward_kernel(const T* logits, const int* labels,
                                                           T* loss, T* grad_logits, int classes,
                                                           int batch) {
  __shared__ T scratch[BLOCK];
  const int sample = blockIdx.x;
  const T* column = logits + size_t(sample) * classes;
  T* grad = grad_logits + size_t(sample) * classes;

  T local_max = -INFINITY;
  for (int c = threadIdx.x; c < classes; c += BLOCK) local_max = fmaxf(local_max, column[c]);
  scratch[threadIdx.x] = local_max;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
    __syncthreads();
  }
  const T column_max = scratch[0];
  __syncthreads();

  T local_sum = 0;
  for (int c = threadIdx.x; c < classes; c += BLOCK) local_sum += expf(column[c] - column_max);
  scratch[threadIdx.x] = local_sum;
  __syncthreads();
  for (int s = BLOCK / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
    __syncthreads();
  }
  const T log_sum = logf(scratch[0]);

  const int label = labels[sample];
  for (int c = threadIdx.x; c < classes; c += BLOCK) {
    const T probability = expf(column[c] - column_max - log_sum);
    grad[c] = (probability - (c == label ? T(1) : T(0))) / batch;
  }
  if (threadIdx.x == 0) atomicAdd(loss, (column_max + log_sum - column[label]) / batch);
}

template <int MAX_TENSORS>
struct TensorListMetadata {
  float* params[MAX_TENSORS];
  const float* grads[MAX_TENSORS];
  float* exp_avg[MAX_TENSORS];
  float* exp_avg_sq[MAX_TENSORS];
  int sizes[MAX_TENSORS];
};

template <typename T>
struct AdamFunctor {
  T learning_rate, beta1, beta2, epsilon;
  int step;
};

// grid.y selects the tensor, grid.x strides over its elements.
template <typename metadata_t, typename functor_t>
__global__ void multi_tensor_apply_kernel(metadata_t tensors, functor_t adam) {
  const int t = blockIdx.y;
  const float correction1 = 1.f - powf(adam.beta1, adam.step);
  const float correction2 = 1.f - powf(adam.beta2, adam.step);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < tensors.sizes[t];
       i += gridDim.x * blockDim.x) {
    const float g = tensors.grads[t][i];
    const float m = tensors.exp_avg[t][i] =
        adam.beta1 * tensors.exp_avg[t][i] + (1 - adam.beta1) * g;
    const float v = tensors.exp_avg_sq[t][i] =
        adam.beta2 * tensors.exp_avg_sq[t][i] + (1 - adam.beta2) * g * g;
    tensors.params[t][i] -=
        adam.learning_rate * (m / correction1) / (sqrtf(v / correction2) + adam.epsilon);
  }
}

namespace {

constexpr int kThreads = 128;
constexpr int kVec = 4;

unsigned blocks_for(int count) {
  return unsigned((count + kThreads * kVec - 1) / (kThreads * kVec));
}

using FillKernel = void (*)(int, FillFunctor<float>, Array<float*, 1>);
using AddKernel = void (*)(int, AddFunctor<float>, Array<float*, 3>);
using ReluKernel = void (*)(int, ReluFunctor<float>, Array<float*, 2>);
using ReluBackwardKernel = void (*)(int, ThresholdBackwardFunctor<float>, Array<float*, 3>);

constexpr FillKernel kFill =
    vectorized_elementwise_kernel<kVec, FillFunctor<float>, Array<float*, 1>>;
constexpr AddKernel kAdd = vectorized_elementwise_kernel<kVec, AddFunctor<float>, Array<float*, 3>>;
constexpr ReluKernel kRelu =
    vectorized_elementwise_kernel<kVec, ReluFunctor<float>, Array<float*, 2>>;
constexpr ReluBackwardKernel kReluBackward =
    vectorized_elementwise_kernel<kVec, ThresholdBackwardFunctor<float>, Array<float*, 3>>;
constexpr int kLossBlock = 256;
constexpr auto kCrossEntropy = cross_entropy_loss_forward_backward_kernel<float, kLossBlock>;
constexpr auto kAdam =
    multi_tensor_apply_kernel<TensorListMetadata<kAdamMaxTensors>, AdamFunctor<float>>;

}  // namespace

cudaError_t fill(float* data, int count, float value, cudaStream_t stream) {
  kFill<<<blocks_for(count), kThreads, 0, stream>>>(count, FillFunctor<float>{value},
                                                    Array<float*, 1>{{data}});
  return cudaGetLastError();
}

cudaError_t add(float* out, const float* a, const float* b, float alpha, int count,
                cudaStream_t stream) {
  kAdd<<<blocks_for(count), kThreads, 0, stream>>>(
      count, AddFunctor<float>{alpha},
      Array<float*, 3>{{out, const_cast<float*>(a), const_cast<float*>(b)}});
  return cudaGetLastError();
}

cudaError_t relu(float* out, const float* in, int count, cudaStream_t stream) {
  kRelu<<<blocks_for(count), kThreads, 0, stream>>>(
      count, ReluFunctor<float>{}, Array<float*, 2>{{out, const_cast<float*>(in)}});
  return cudaGetLastError();
}

cudaError_t relu_backward(float* grad_in, const float* grad_out, const float* activation, int count,
                          cudaStream_t stream) {
  kReluBackward<<<blocks_for(count), kThreads, 0, stream>>>(
      count, ThresholdBackwardFunctor<float>{},
      Array<float*, 3>{{grad_in, const_cast<float*>(grad_out), const_cast<float*>(activation)}});
  return cudaGetLastError();
}

cudaError_t cross_entropy(const float* logits, const int* labels, float* loss, float* grad_logits,
                          int classes, int batch, cudaStream_t stream) {
  kCrossEntropy<<<unsigned(batch), kLossBlock, 0, stream>>>(logits, labels, loss, grad_logits,
                                                            classes, batch);
  return cudaGetLastError();
}

cudaError_t adam_step(const AdamTensors& tensors, float learning_rate, int step,
                      cudaStream_t stream) {
  TensorListMetadata<kAdamMaxTensors> metadata{};
  for (int t = 0; t < tensors.count; ++t) {
    metadata.params[t] = tensors.params[t];
    metadata.grads[t] = tensors.grads[t];
    metadata.exp_avg[t] = tensors.exp_avg[t];
    metadata.exp_avg_sq[t] = tensors.exp_avg_sq[t];
    metadata.sizes[t] = tensors.sizes[t];
  }
  const dim3 grid(64, unsigned(tensors.count));
  kAdam<<<grid, 512, 0, stream>>>(metadata,
                                  AdamFunctor<float>{learning_rate, 0.9f, 0.999f, 1e-8f, step});
  return cudaGetLastError();
}

const KernelHostFunctions& kernel_host_functions() {
  static const KernelHostFunctions functions{
      reinterpret_cast<const void*>(kFill),         reinterpret_cast<const void*>(kAdd),
      reinterpret_cast<const void*>(kRelu),         reinterpret_cast<const void*>(kReluBackward),
      reinterpret_cast<const void*>(kCrossEntropy), reinterpret_cast<const void*>(kAdam)};
  return functions;
}

}  // namespace simtorch
