// libsimblas: a small cuBLAS-like library for the simulated GPU stack.
//
// Like cuBLAS it has no link-time dependency on libcuda or libcudart: it
// dlopens libcuda.so.1, takes cuGetProcAddress_v2 with dlsym and resolves
// every other driver entry point through it, and it loads its own embedded
// fatbin. Matrices are column-major, as in cuBLAS. Device pointers come from
// cudaMalloc or cuMemAlloc (the same address space).
#ifndef SIMBLAS_H
#define SIMBLAS_H

#include <cuda.h>  // CUstream only: no link-time dependency on libcuda.
#include <stdint.h>

// Built with hidden visibility: only these functions are exported.
#define SIMBLAS_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  SIMBLAS_STATUS_SUCCESS = 0,
  SIMBLAS_STATUS_NOT_INITIALIZED = 1,  // no driver, or no device
  SIMBLAS_STATUS_ALLOC_FAILED = 3,
  SIMBLAS_STATUS_INVALID_VALUE = 7,
  SIMBLAS_STATUS_ARCH_MISMATCH = 8,  // the FP16 GEMM needs compute capability 9.0+
  SIMBLAS_STATUS_EXECUTION_FAILED = 13,
  SIMBLAS_STATUS_INTERNAL_ERROR = 14,
  SIMBLAS_STATUS_NOT_SUPPORTED = 15,  // both operands transposed
} simblasStatus_t;

typedef enum {
  SIMBLAS_OP_N = 0,
  SIMBLAS_OP_T = 1,
} simblasOperation_t;

typedef struct simblasContext* simblasHandle_t;

// Loads the driver and the kernels on first use, makes the device's primary
// context current if no context is, and allocates the handle's workspace
// (cuMemAlloc). The handle launches on the legacy default stream until
// simblasSetStream says otherwise.
SIMBLAS_API simblasStatus_t simblasCreate(simblasHandle_t* handle);
SIMBLAS_API simblasStatus_t simblasDestroy(simblasHandle_t handle);
SIMBLAS_API simblasStatus_t simblasSetStream(simblasHandle_t handle, CUstream stream);
SIMBLAS_API simblasStatus_t simblasGetStream(simblasHandle_t handle, CUstream* stream);

// C = alpha * op(A) * op(B) + beta * C (FP32), op(A) m x k, op(B) k x n,
// C m x n; the cuBLAS signature. Depending on the shape this launches
// ampere_sgemm_128x64_<ab>, a CUTLASS kernel, or a split-K CUTLASS kernel
// followed by splitKreduce_kernel (<ab> = nn, nt or tn; tt is not supported).
SIMBLAS_API simblasStatus_t simblasSgemm(simblasHandle_t handle, simblasOperation_t transa,
                                         simblasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         const float* B, int ldb, const float* beta, float* C,
                                         int ldc);

// Same with FP16 storage (IEEE half bit patterns) and FP32 accumulation:
// launches the sm90 xmma GEMM, which needs compute capability 9.0.
SIMBLAS_API simblasStatus_t simblasGemmF16(simblasHandle_t handle, simblasOperation_t transa,
                                           simblasOperation_t transb, int m, int n, int k,
                                           const float* alpha, const uint16_t* A, int lda,
                                           const uint16_t* B, int ldb, const float* beta,
                                           uint16_t* C, int ldc);

// The device name of the kernel simblasSgemm launches first for this shape
// with ldc == m (mangled where the device symbol is mangled), or null for an
// unsupported layout. Lets callers and tests know what to expect without
// looking inside the library.
SIMBLAS_API const char* simblasSgemmKernelName(simblasOperation_t transa, simblasOperation_t transb,
                                               int m, int n, int k);

SIMBLAS_API const char* simblasGetStatusString(simblasStatus_t status);

#ifdef __cplusplus
}
#endif

#endif  // SIMBLAS_H
