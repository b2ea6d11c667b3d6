// The driver functions the simulated runtime calls, and how it gets them.
//
// Like the real libcudart, this library has no link-time dependency on
// libcuda: at first use it dlopens "libcuda.so.1", looks up only
// cuGetProcAddress_v2 with dlsym, and asks that for every other function.
// Two tables are filled, because the same name resolves to different ABI
// variants depending on the per-thread-default-stream flag: the legacy table
// (cuMemcpyHtoD_v2, cuLaunchKernel, ...) serves the plain runtime entry points,
// the per-thread table (cuMemcpyHtoD_v2_ptds, cuLaunchKernel_ptsz, ...) serves
// the _ptds/_ptsz entry points that nvcc --default-stream per-thread selects.
#pragma once

#include <cuda.h>
#include <cudaProfiler.h>
#include <driver_types.h>

// Names are the base names cuGetProcAddress expects ("cuMemAlloc", not
// "cuMemAlloc_v2"). cuda.h maps several of them to versioned macros
// (cuMemAlloc -> cuMemAlloc_v2); the member named after the macro gets the
// type of the newest ABI, which is the one a CUDA 13 request returns.
#define SIMGPU_RUNTIME_DRIVER_FUNCTIONS(X)                                                    \
  X(cuInit) X(cuDriverGetVersion)                                                              \
  X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName) X(cuDeviceTotalMem)                    \
  X(cuDeviceGetAttribute) X(cuDeviceGetUuid) X(cuDeviceCanAccessPeer) X(cuDeviceGetPCIBusId)   \
  X(cuDeviceGetDefaultMemPool) X(cuDeviceGetMemPool) X(cuDeviceSetMemPool)                     \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuDevicePrimaryCtxReset)          \
  X(cuDevicePrimaryCtxSetFlags) X(cuDevicePrimaryCtxGetState)                                  \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)                  \
  X(cuCtxGetLimit) X(cuCtxSetLimit) X(cuCtxGetStreamPriorityRange)                             \
  X(cuCtxEnablePeerAccess) X(cuCtxDisablePeerAccess)                                           \
  X(cuMemAlloc) X(cuMemFree) X(cuMemAllocHost) X(cuMemHostAlloc) X(cuMemFreeHost)              \
  X(cuMemHostRegister) X(cuMemHostUnregister) X(cuMemHostGetDevicePointer)                     \
  X(cuMemHostGetFlags) X(cuMemAllocManaged) X(cuMemAllocPitch) X(cuMemGetInfo)                 \
  X(cuMemGetAddressRange) X(cuPointerGetAttribute) X(cuPointerGetAttributes)                   \
  X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemAllocFromPoolAsync)                              \
  X(cuMemPoolTrimTo) X(cuMemPoolGetAttribute) X(cuMemPoolSetAttribute)                         \
  X(cuMemPoolCreate) X(cuMemPoolDestroy)                                                       \
  X(cuMemcpy) X(cuMemcpyAsync) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD)                 \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)                               \
  X(cuMemcpyPeer) X(cuMemcpyPeerAsync) X(cuMemcpy2DUnaligned) X(cuMemcpy2DAsync)               \
  X(cuMemsetD8) X(cuMemsetD8Async) X(cuMemsetD2D8) X(cuMemsetD2D8Async)                        \
  X(cuStreamCreate) X(cuStreamCreateWithPriority) X(cuStreamDestroy)                           \
  X(cuStreamSynchronize) X(cuStreamQuery) X(cuStreamWaitEvent) X(cuStreamGetPriority)          \
  X(cuStreamGetFlags) X(cuStreamGetId) X(cuStreamGetDevice) X(cuStreamAddCallback)             \
  X(cuLaunchHostFunc)                                                                          \
  X(cuEventCreate) X(cuEventRecord) X(cuEventRecordWithFlags) X(cuEventQuery)                  \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)                                \
  X(cuLibraryLoadData) X(cuLibraryUnload) X(cuLibraryGetKernel) X(cuLibraryGetGlobal)          \
  X(cuLibraryGetManaged) X(cuKernelGetFunction) X(cuKernelSetAttribute)                        \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuFuncSetCacheConfig)                          \
  X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuLaunchCooperativeKernel)                           \
  X(cuProfilerStart) X(cuProfilerStop)

namespace simgpu_runtime {

struct DriverApi {
#define SIMGPU_RUNTIME_DECLARE_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  SIMGPU_RUNTIME_DRIVER_FUNCTIONS(SIMGPU_RUNTIME_DECLARE_DRIVER_MEMBER)
#undef SIMGPU_RUNTIME_DECLARE_DRIVER_MEMBER

  // The entry point itself, for cudaGetDriverEntryPoint(ByVersion).
  decltype(&::cuGetProcAddress_v2) cuGetProcAddress_v2 = nullptr;
};

enum class DefaultStream { legacy, per_thread };

// The CUDA version the runtime requests driver ABIs for (what it was built
// against, like the real runtime).
inline constexpr int kRequestedDriverAbiVersion = CUDA_VERSION;

// Loads the driver and calls cuInit(0) once per process. Returns cudaSuccess
// and the table for `mode`, or the runtime error that explains why there is
// no usable driver (cudaErrorInsufficientDriver when libcuda.so.1 is absent).
cudaError_t load_driver(DefaultStream mode, const DriverApi** api);

// Whether a table entry is the placeholder for a function the driver did not
// hand out (the placeholder returns CUDA_ERROR_NOT_SUPPORTED when called).
bool driver_lacks(const void* function);

// True once exit() has begun running the handlers registered after the driver
// was loaded: from then on the driver's own destructors may have run, so
// cleanup paths (__cudaUnregisterFatBinary) must not call it.
bool process_is_exiting();

}  // namespace simgpu_runtime
