// Device code of libsimblas, compiled by nvcc into a fatbin that the library
// embeds and loads itself (the way cuBLAS carries its kernels). The kernel
// names copy the shapes of real cuBLAS/CUTLASS names, because the profiler's
// tests must handle exactly those: extern "C" xmma/ampere names with the
// operand layout as suffix (nn, nt, tn = transa, transb), a templated CUTLASS
// kernel whose name only exists mangled, and a split-K reduction with a long
// template argument list.
//
// The bodies are plain, correct column-major GEMMs so the library would also
// compute the right answer on a real GPU; on the simulator they never run.
#include <cuda_fp16.h>

// C = alpha * op(A) * op(B) + beta * C, column-major, op(X) = X or X^T.
// One thread block owns a TILE_M x TILE_N tile of C; threads stride over it.
template <int TILE_M, int TILE_N, bool TRANS_A, bool TRANS_B, typename In, typename Out>
__device__ void gemm_tile(int m, int n, int k, float alpha, const In* A, int lda, const In* B,
                          int ldb, float beta, Out* C, int ldc, int k_begin, int k_end) {
  const int tile_row = blockIdx.x * TILE_M;
  const int tile_col = blockIdx.y * TILE_N;
  for (int e = threadIdx.x; e < TILE_M * TILE_N; e += blockDim.x) {
    const int row = tile_row + e % TILE_M;
    const int col = tile_col + e / TILE_M;
    if (row >= m || col >= n) continue;
    float acc = 0.f;
    for (int p = k_begin; p < k_end; ++p) {
      const float a = float(TRANS_A ? A[p + size_t(row) * lda] : A[row + size_t(p) * lda]);
      const float b = float(TRANS_B ? B[col + size_t(p) * ldb] : B[p + size_t(col) * ldb]);
      acc += a * b;
    }
    const float old = beta == 0.f ? 0.f : float(C[row + size_t(col) * ldc]);
    C[row + size_t(col) * ldc] = Out(alpha * acc + beta * old);
  }
}

// FP32 SIMT GEMM with 128x64 tiles: the name family of cuBLAS's Ampere sgemm.
#define SIMBLAS_AMPERE_SGEMM(layout, trans_a, trans_b)                                        \
  extern "C" __global__ void __launch_bounds__(256)                                           \
      ampere_sgemm_128x64_##layout(int m, int n, int k, float alpha, const float* A, int lda, \
                                   const float* B, int ldb, float beta, float* C, int ldc) {  \
    gemm_tile<128, 64, trans_a, trans_b>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 0, k); \
  }
SIMBLAS_AMPERE_SGEMM(nn, false, false)
SIMBLAS_AMPERE_SGEMM(nt, false, true)
SIMBLAS_AMPERE_SGEMM(tn, true, false)

// FP16 storage, FP32 accumulation: the Hopper warp-group GEMM name family.
// clang-format off
#define SIMBLAS_SM90_XMMA_GEMM_F16(layout, trans_a, trans_b)                                      \
  extern "C" __global__ void __launch_bounds__(128)                                               \
  sm90_xmma_gemm_f16f16_f16f32_f32_##layout##_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas( \
      int m, int n, int k, float alpha, const __half* A, int lda, const __half* B, int ldb,       \
      float beta, __half* C, int ldc) {                                                           \
    gemm_tile<128, 128, trans_a, trans_b>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, 0, k);    \
  }
// clang-format on
SIMBLAS_SM90_XMMA_GEMM_F16(nn, false, false)
SIMBLAS_SM90_XMMA_GEMM_F16(nt, false, true)
SIMBLAS_SM90_XMMA_GEMM_F16(tn, true, false)

// CUTLASS-style kernels: the operator is a class template argument and the
// entry point takes the operator's Params by value, so the symbol is only
// meaningful demangled, e.g.
// void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(...::Params)
template <bool TRANS_A, bool TRANS_B>
struct CutlassSgemm64x64 {
  static constexpr int kTileM = 64;
  static constexpr int kTileN = 64;
  static constexpr bool kTransA = TRANS_A;
  static constexpr bool kTransB = TRANS_B;
  struct Params {
    int m, n, k;
    float alpha, beta;
    const float* A;
    const float* B;
    float* C;  // with split-K: partial results, one slice of C per grid.z
    int lda, ldb, ldc;
    int k_per_split;
  };
};
struct cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4 : CutlassSgemm64x64<false, false> {};
struct cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4 : CutlassSgemm64x64<false, true> {};
struct cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4 : CutlassSgemm64x64<true, false> {};

namespace cutlass {
template <typename Operator>
__global__ void Kernel2(typename Operator::Params params) {
  const int k_begin = blockIdx.z * params.k_per_split;
  const int k_end = min(params.k, k_begin + params.k_per_split);
  float* slice = params.C + size_t(blockIdx.z) * params.ldc * params.n;
  const float beta = gridDim.z > 1 ? 0.f : params.beta;
  gemm_tile<Operator::kTileM, Operator::kTileN, Operator::kTransA, Operator::kTransB>(
      params.m, params.n, params.k, params.alpha, params.A, params.lda, params.B, params.ldb, beta,
      slice, params.ldc, k_begin, k_end);
}
template __global__ void Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(
    cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params);
template __global__ void Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(
    cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params);
template __global__ void Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(
    cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params);
}  // namespace cutlass

// Sums the split-K partial slices into C and applies beta (cuBLAS launches a
// kernel of this shape after a split-K GEMM).
template <typename T>
struct simblasSplitKParams {
  int m, n, ldc, splits;
  T beta;
};

template <int BLOCK_X, int BLOCK_Y, typename Index, typename Partial, typename Out, bool kHasBeta,
          bool kHasBias>
__global__ void splitKreduce_kernel(simblasSplitKParams<float> p, const Partial* partials, Out* C) {
  const Index i = Index(blockIdx.x) * BLOCK_X * BLOCK_Y + threadIdx.x;
  if (i >= Index(p.m) * p.n) return;
  const Index row = i % p.m, col = i / p.m;
  float sum = 0.f;
  for (int s = 0; s < p.splits; ++s) sum += partials[size_t(s) * p.ldc * p.n + row + col * p.ldc];
  if (kHasBeta) sum += p.beta * C[row + col * p.ldc];
  C[row + col * p.ldc] = Out(sum);
}
template __global__ void splitKreduce_kernel<32, 16, int, float, float, true, false>(
    simblasSplitKParams<float>, const float*, float*);
