// GEMM entry points: pick a kernel for the shape (a tiny version of cuBLAS's
// heuristics) and launch it through cuLaunchKernel on the handle's stream.
#include <algorithm>

#include "simblas_internal.h"

namespace simblas {
namespace {

// Parameter block of cutlass::Kernel2<...> (same layout as in the .cu).
struct CutlassGemmParams {
  int m, n, k;
  float alpha, beta;
  const float* A;
  const float* B;
  float* C;
  int lda, ldb, ldc;
  int k_per_split;
};

struct SplitKParams {
  int m, n, ldc, splits;
  float beta;
};

// Symbols, indexed [family][layout]. The CUTLASS entry points are
// cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_<ab>_align4>.
const char* const kGemmSymbols[kGemmFamilyCount][kOperandLayoutCount] = {
    {"ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nt", "ampere_sgemm_128x64_tn"},
    {"sm90_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     "sm90_xmma_gemm_f16f16_f16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas",
     "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas"},
    {"_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4EEvNT_6ParamsE",
     "_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4EEvNT_6ParamsE",
     "_ZN7cutlass7Kernel2I50cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4EEvNT_6ParamsE"},
};

unsigned ceil_div(long a, long b) { return unsigned((a + b - 1) / b); }

bool operand_layout(simblasOperation_t transa, simblasOperation_t transb, OperandLayout* layout) {
  const bool ta = transa == SIMBLAS_OP_T, tb = transb == SIMBLAS_OP_T;
  if (ta && tb) return false;
  *layout = ta ? kLayoutTN : tb ? kLayoutNT : kLayoutNN;
  return true;
}

// Long-K products with a small output leave most SMs idle with one block
// per tile, so K is cut into slices summed by a second kernel. Returns 1
// when splitting does not pay or the partials do not fit the workspace.
int split_k_count(int m, int n, int k, int ldc) {
  const int longest_side = std::max(m, n);
  if (k < 8 * longest_side || long(m) * n > 256L * 256L) return 1;
  int splits = std::min(8, k / (4 * longest_side));
  while (splits > 1 && size_t(splits) * ldc * n * sizeof(float) > kWorkspaceBytes) --splits;
  return std::max(splits, 1);
}

bool use_ampere_sgemm(int m, int n) { return m >= 128 && n >= 64; }

simblasStatus_t launch(simblasHandle_t h, CUfunction function, unsigned grid_x, unsigned grid_y,
                       unsigned grid_z, unsigned block_x, void** params) {
  const CUresult rc = h->driver->launch_kernel(function, grid_x, grid_y, grid_z, block_x, 1, 1, 0,
                                               h->stream, params, nullptr);
  return rc == CUDA_SUCCESS ? SIMBLAS_STATUS_SUCCESS : SIMBLAS_STATUS_EXECUTION_FAILED;
}

// cuBLAS's argument checks: leading dimensions cover the stored matrices.
bool valid_shape(simblasOperation_t transa, simblasOperation_t transb, int m, int n, int k, int lda,
                 int ldb, int ldc) {
  const int a_rows = transa == SIMBLAS_OP_N ? m : k;
  const int b_rows = transb == SIMBLAS_OP_N ? k : n;
  return m >= 0 && n >= 0 && k >= 0 && lda >= std::max(1, a_rows) && ldb >= std::max(1, b_rows) &&
         ldc >= std::max(1, m);
}

}  // namespace

const char* gemm_kernel_symbol(GemmFamily family, OperandLayout layout) {
  return kGemmSymbols[family][layout];
}

const char* const kSplitKReduceSymbol =
    "_Z19splitKreduce_kernelILi32ELi16EiffLb1ELb0EEv19simblasSplitKParamsIfEPKT2_PT3_";

}  // namespace simblas

using namespace simblas;

extern "C" const char* simblasSgemmKernelName(simblasOperation_t transa, simblasOperation_t transb,
                                              int m, int n, int k) {
  OperandLayout layout;
  if (!operand_layout(transa, transb, &layout)) return nullptr;
  const bool ampere = split_k_count(m, n, k, std::max(m, 1)) == 1 && use_ampere_sgemm(m, n);
  return gemm_kernel_symbol(ampere ? kAmpereSgemm : kCutlassSgemm, layout);
}

extern "C" simblasStatus_t simblasSgemm(simblasHandle_t h, simblasOperation_t transa,
                                        simblasOperation_t transb, int m, int n, int k,
                                        const float* alpha, const float* A, int lda, const float* B,
                                        int ldb, const float* beta, float* C, int ldc) {
  if (h == nullptr) return SIMBLAS_STATUS_NOT_INITIALIZED;
  OperandLayout layout;
  if (!operand_layout(transa, transb, &layout)) return SIMBLAS_STATUS_NOT_SUPPORTED;
  if (alpha == nullptr || beta == nullptr || !valid_shape(transa, transb, m, n, k, lda, ldb, ldc))
    return SIMBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return SIMBLAS_STATUS_SUCCESS;

  const int splits = split_k_count(m, n, k, ldc);
  if (splits == 1 && use_ampere_sgemm(m, n)) {
    float a = *alpha, b = *beta;
    void* params[] = {&m, &n, &k, &a, &A, &lda, &B, &ldb, &b, &C, &ldc};
    return launch(h, h->gemm[kAmpereSgemm][layout], ceil_div(m, 128), ceil_div(n, 64), 1, 256,
                  params);
  }

  // With split-K the CUTLASS kernel writes one partial C per slice of K into
  // the workspace (same leading dimension as C), and splitKreduce sums them
  // and applies beta.
  float* partials = reinterpret_cast<float*>(h->workspace);
  const CutlassGemmParams gemm{.m = m, .n = n, .k = k, .alpha = *alpha, .beta = *beta,
                               .A = A, .B = B, .C = splits > 1 ? partials : C,
                               .lda = lda, .ldb = ldb, .ldc = ldc,
                               .k_per_split = int(ceil_div(k, splits))};
  void* gemm_params[] = {const_cast<CutlassGemmParams*>(&gemm)};
  const simblasStatus_t status = launch(h, h->gemm[kCutlassSgemm][layout], ceil_div(m, 64),
                                        ceil_div(n, 64), unsigned(splits), 128, gemm_params);
  if (status != SIMBLAS_STATUS_SUCCESS || splits == 1) return status;

  SplitKParams reduce{m, n, ldc, splits, *beta};
  const float* partials_in = partials;
  void* reduce_params[] = {&reduce, &partials_in, &C};
  return launch(h, h->split_k_reduce, ceil_div(long(m) * n, 32 * 16), 1, 1, 32 * 16, reduce_params);
}

extern "C" simblasStatus_t simblasGemmF16(simblasHandle_t h, simblasOperation_t transa,
                                          simblasOperation_t transb, int m, int n, int k,
                                          const float* alpha, const uint16_t* A, int lda,
                                          const uint16_t* B, int ldb, const float* beta,
                                          uint16_t* C, int ldc) {
  if (h == nullptr) return SIMBLAS_STATUS_NOT_INITIALIZED;
  OperandLayout layout;
  if (!operand_layout(transa, transb, &layout)) return SIMBLAS_STATUS_NOT_SUPPORTED;
  if (alpha == nullptr || beta == nullptr || !valid_shape(transa, transb, m, n, k, lda, ldb, ldc))
    return SIMBLAS_STATUS_INVALID_VALUE;
  if (h->compute_capability_major < 9) return SIMBLAS_STATUS_ARCH_MISMATCH;
  if (m == 0 || n == 0) return SIMBLAS_STATUS_SUCCESS;
  float a = *alpha, b = *beta;
  void* params[] = {&m, &n, &k, &a, &A, &lda, &B, &ldb, &b, &C, &ldc};
  return launch(h, h->gemm[kSm90XmmaGemmF16][layout], ceil_div(m, 128), ceil_div(n, 128), 1, 128,
                params);
}
