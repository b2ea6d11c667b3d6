// Declarations of the per-thread-default-stream entry points this runtime
// exports. cuda_runtime_api.h only names them through macros when a program
// is compiled with --default-stream per-thread (cudaMemcpy becomes
// cudaMemcpy_ptds, cudaMemcpyAsync becomes cudaMemcpyAsync_ptsz), so the
// library, compiled without that flag, declares them here with exactly the
// type of the legacy function they shadow.
#pragma once

#include <cuda_runtime_api.h>

#define SIMGPU_RUNTIME_PER_THREAD_VARIANT(legacy, suffixed) extern "C" decltype(::legacy) suffixed;

// Synchronous copies and memsets: _ptds.
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpy, cudaMemcpy_ptds)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpy2D, cudaMemcpy2D_ptds)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpyToSymbol, cudaMemcpyToSymbol_ptds)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_ptds)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemset, cudaMemset_ptds)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemset2D, cudaMemset2D_ptds)

// Stream-ordered calls: _ptsz.
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpyAsync, cudaMemcpyAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpy2DAsync, cudaMemcpy2DAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemsetAsync, cudaMemsetAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMemset2DAsync, cudaMemset2DAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMallocAsync, cudaMallocAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaFreeAsync, cudaFreeAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaMallocFromPoolAsync, cudaMallocFromPoolAsync_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamSynchronize, cudaStreamSynchronize_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamQuery, cudaStreamQuery_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamWaitEvent, cudaStreamWaitEvent_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamGetPriority, cudaStreamGetPriority_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamGetFlags, cudaStreamGetFlags_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamGetId, cudaStreamGetId_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamGetDevice, cudaStreamGetDevice_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamSetAttribute, cudaStreamSetAttribute_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamGetAttribute, cudaStreamGetAttribute_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamCopyAttributes, cudaStreamCopyAttributes_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamAddCallback, cudaStreamAddCallback_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamIsCapturing, cudaStreamIsCapturing_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaStreamGetCaptureInfo, cudaStreamGetCaptureInfo_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaEventRecord, cudaEventRecord_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaEventRecordWithFlags, cudaEventRecordWithFlags_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaLaunchKernel, cudaLaunchKernel_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaLaunchKernelExC, cudaLaunchKernelExC_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaLaunchCooperativeKernel, cudaLaunchCooperativeKernel_ptsz)
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaLaunchHostFunc, cudaLaunchHostFunc_ptsz)
// Deprecated in favour of ...ByVersion, still exported and still used.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaGetDriverEntryPoint, cudaGetDriverEntryPoint_ptsz)
#pragma GCC diagnostic pop
SIMGPU_RUNTIME_PER_THREAD_VARIANT(cudaGetDriverEntryPointByVersion,
                                  cudaGetDriverEntryPointByVersion_ptsz)

#undef SIMGPU_RUNTIME_PER_THREAD_VARIANT
