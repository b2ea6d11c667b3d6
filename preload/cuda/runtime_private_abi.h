// The runtime's host-stub ABI: what code compiled by nvcc calls in
// libcudart, declared by no header a program includes (nvcc's crt headers
// declare it for the code it generates). The signatures are those of the
// CUDA 13 crt headers (host_runtime.h, device_functions.h); the nvcc-built
// test programs prove them. gen_cuda_hooks.py reads this file like the
// public headers; the generated wrappers include it.
//
// libcudart.so.13 also exports __cudaRegisterHostVar, __cudaRegisterUnifiedTable
// and __cudaGetProcAddress, whose signatures no header of the toolkit gives:
// the shim does not interpose them (hook_rows.txt lists them as such).
#pragma once

#include <cuda_runtime_api.h>

#ifndef CUDARTAPI
#define CUDARTAPI
#endif

extern "C" {

extern void** CUDARTAPI __cudaRegisterFatBinary(void *fatCubin);
extern void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle);
extern void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle);
extern void CUDARTAPI __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress, const char *deviceName, int ext, size_t size, int constant, int global);
extern void CUDARTAPI __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName, int ext, size_t size, int constant, int global);
extern char CUDARTAPI __cudaInitModule(void **fatCubinHandle);
extern void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun, const char *deviceName, int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize);
extern unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream);
extern cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream);
extern cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
extern cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);
extern cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem, cudaStream_t stream);

}  // extern "C"
