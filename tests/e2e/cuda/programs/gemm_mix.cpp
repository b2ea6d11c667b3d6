// Every GEMM kernel family of the cuBLAS-like library, once each, on the
// legacy default stream: a large SGEMM (ampere_sgemm_128x64_nn), a small one
// (a CUTLASS kernel), a split-K one (CUTLASS + splitKreduce_kernel) and an
// FP16 GEMM (the sm90 xmma kernel). The library reaches the driver only
// through cuGetProcAddress_v2; the buffers come from the runtime.
//
// usage: gemm_mix
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "simblas.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "error: %s failed\n", what);
  std::exit(1);
}

}  // namespace

int main() {
  constexpr int kMax = 2048;
  float* a = nullptr;
  float* b = nullptr;
  float* c = nullptr;
  check(cudaMalloc(&a, sizeof(float) * kMax * kMax) == cudaSuccess, "cudaMalloc");
  check(cudaMalloc(&b, sizeof(float) * kMax * kMax) == cudaSuccess, "cudaMalloc");
  check(cudaMalloc(&c, sizeof(float) * kMax * kMax) == cudaSuccess, "cudaMalloc");
  simblasHandle_t blas = nullptr;
  check(simblasCreate(&blas) == SIMBLAS_STATUS_SUCCESS, "simblasCreate");
  const float one = 1.f, zero = 0.f;
  auto sgemm = [&](int m, int n, int k) {
    check(simblasSgemm(blas, SIMBLAS_OP_N, SIMBLAS_OP_N, m, n, k, &one, a, m, b, k, &zero, c, m) ==
              SIMBLAS_STATUS_SUCCESS,
          "simblasSgemm");
  };
  sgemm(256, 128, 64);   // ampere_sgemm_128x64_nn
  sgemm(64, 32, 64);     // CUTLASS
  sgemm(64, 64, 1024);   // split-K: CUTLASS + splitKreduce_kernel
  auto* half_a = reinterpret_cast<const uint16_t*>(a);
  auto* half_b = reinterpret_cast<const uint16_t*>(b);
  check(simblasGemmF16(blas, SIMBLAS_OP_N, SIMBLAS_OP_N, 128, 128, 64, &one, half_a, 128, half_b,
                       64, &zero, reinterpret_cast<uint16_t*>(c), 128) == SIMBLAS_STATUS_SUCCESS,
        "simblasGemmF16");
  check(cudaDeviceSynchronize() == cudaSuccess, "cudaDeviceSynchronize");
  simblasDestroy(blas);
  for (float* p : {a, b, c}) check(cudaFree(p) == cudaSuccess, "cudaFree");
  std::printf("gemm_mix: sgemm=3 gemm_f16=1 ok\n");
  return 0;
}
