// Device code shaped like what TorchInductor generates with Triton: plain
// (unmangled) kernel names of the form triton_<kind>_fused_<ops>_<n>, one
// program per block, pointer and size arguments followed by the global
// scratch pointer that Triton 3.x appends. Compiled to a plain cubin, which
// is what Triton hands to cuModuleLoadData.

// Pointwise: out = (in0 + in1) * in0, XBLOCK elements per program.
extern "C" __global__ void triton_poi_fused_add_mul_0(const float* in_ptr0, const float* in_ptr1,
                                                      float* out_ptr0, int xnumel,
                                                      void* global_scratch) {
  const int xoffset = blockIdx.x * 1024;
  for (int x = xoffset + threadIdx.x; x < xoffset + 1024 && x < xnumel; x += blockDim.x)
    out_ptr0[x] = (in_ptr0[x] + in_ptr1[x]) * in_ptr0[x];
}

// Reduction: row-wise softmax, one program per row of r0_numel elements.
extern "C" __global__ void triton_red_fused__softmax_1(const float* in_ptr0, float* out_ptr2,
                                                       int xnumel, int r0_numel,
                                                       void* global_scratch) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= xnumel) return;
  const float* in = in_ptr0 + size_t(row) * r0_numel;
  float* out = out_ptr2 + size_t(row) * r0_numel;

  float local_max = -INFINITY;
  for (int r = threadIdx.x; r < r0_numel; r += blockDim.x) local_max = fmaxf(local_max, in[r]);
  partial[threadIdx.x] = local_max;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s)
      partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();

  float local_sum = 0.f;
  for (int r = threadIdx.x; r < r0_numel; r += blockDim.x) local_sum += __expf(in[r] - row_max);
  partial[threadIdx.x] = local_sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float row_sum = partial[0];
  for (int r = threadIdx.x; r < r0_numel; r += blockDim.x)
    out[r] = __expf(in[r] - row_max) / row_sum;
}
