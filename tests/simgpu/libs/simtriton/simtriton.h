// libsimtriton: the way Triton (and XLA) reach the GPU. It dlopens
// libcuda.so.1 and looks up each driver function by its exported name with
// plain dlsym - no cuGetProcAddress, no libcudart - loads a cubin with
// cuModuleLoadData and launches its kernels with cuLaunchKernel, like the
// launcher stub Triton compiles for each kernel.
#ifndef SIMTRITON_H
#define SIMTRITON_H

#include <cuda.h>  // types only: no link-time dependency on libcuda.

// Built with hidden visibility: only these functions are exported.
#define SIMTRITON_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// Loads the driver and the cubin into the current context (making device
// 0's primary context current if there is none, as Triton's launcher does)
// and allocates the kernels' global scratch buffer. Idempotent per thread's
// context. Returns CUDA_SUCCESS or the failing driver call's result.
SIMTRITON_API CUresult simtritonInit(void);

// triton_poi_fused_add_mul_0: out[i] = (in0[i] + in1[i]) * in0[i], i < n.
SIMTRITON_API CUresult simtritonAddMul(CUstream stream, CUdeviceptr in0, CUdeviceptr in1,
                                       CUdeviceptr out, int n);

// triton_red_fused__softmax_1: row-wise softmax of a rows x cols matrix.
SIMTRITON_API CUresult simtritonSoftmax(CUstream stream, CUdeviceptr in, CUdeviceptr out, int rows,
                                        int cols);

// What went wrong in the last failed call on this thread ("" if nothing).
SIMTRITON_API const char* simtritonLastError(void);

#ifdef __cplusplus
}
#endif

#endif  // SIMTRITON_H
