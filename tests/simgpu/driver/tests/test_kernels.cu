// Kernels for the driver tests, compiled by nvcc at build time into a cubin, a
// PTX file and fatbins of every flavour nvcc 13 emits. The simulator never runs
// their code: the tests check that the images load, that kernels are found by
// their ELF symbol names, and that launches take the modelled time.

// A C-linkage kernel: its symbol is its plain name.
extern "C" __global__ void add_one(float* data, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] += 1.0f;
}

// A template kernel: its symbol is the mangled name, e.g. _Z5scaleIfEvPT_S0_i.
template <typename T>
__global__ void scale(T* data, T factor, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) data[i] *= factor;
}
template __global__ void scale<float>(float*, float, int);
template __global__ void scale<double>(double*, double, int);

// __launch_bounds__ shows up as a 128-thread limit (cuFuncGetAttribute).
extern "C" __global__ void __launch_bounds__(128) bounded(float* data) {
  __shared__ float tile[128];
  tile[threadIdx.x] = data[threadIdx.x];
  __syncthreads();
  data[threadIdx.x] = tile[127 - threadIdx.x];
}

// A kernel without parameters.
extern "C" __global__ void empty_kernel() {}

// Module variables for cuModuleGetGlobal.
__device__ int initialized_counter = 42;
__device__ float zeroed_buffer[256];
__managed__ int managed_value = 7;
