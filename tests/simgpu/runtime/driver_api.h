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
#include <cudaProfilerTypedefs.h>
#include <cudaTypedefs.h>
#include <driver_types.h>

// Each entry: the base name cuGetProcAddress expects ("cuMemAlloc", not
// "cuMemAlloc_v2"), the CUDA version that introduced the ABI this runtime
// calls, and the version of its per-thread (_ptds/_ptsz) variant, 0 if it has
// none. Like the real runtime, the legacy table is requested with the
// introducing version and flags 0, the per-thread table with
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, and only for functions that
// have such a variant. The versions are those of cudaTypedefs.h, whose
// PFN_<name>_v<version> types the table members use, so each pointer has
// exactly the type of the ABI its version selects. (cuCtxGetDevice and
// cuCtxSynchronize: the 2000 ABI; 13000 added a context parameter.)
#define SIMGPU_RUNTIME_DRIVER_FUNCTIONS(X)                                                     \
  X(cuInit, 2000, 0) X(cuDriverGetVersion, 2020, 0) X(cuDeviceGet, 2000, 0)                    \
  X(cuDeviceGetCount, 2000, 0) X(cuDeviceGetName, 2000, 0) X(cuDeviceTotalMem, 3020, 0)        \
  X(cuDeviceGetAttribute, 2000, 0) X(cuDeviceGetUuid, 11040, 0)                                \
  X(cuDeviceCanAccessPeer, 4000, 0) X(cuDeviceGetPCIBusId, 4010, 0)                            \
  X(cuDeviceGetDefaultMemPool, 11020, 0) X(cuDeviceGetMemPool, 11020, 0)                       \
  X(cuDeviceSetMemPool, 11020, 0) X(cuDevicePrimaryCtxRetain, 7000, 0)                         \
  X(cuDevicePrimaryCtxRelease, 11000, 0) X(cuDevicePrimaryCtxReset, 11000, 0)                  \
  X(cuDevicePrimaryCtxSetFlags, 11000, 0) X(cuDevicePrimaryCtxGetState, 7000, 0)               \
  X(cuCtxGetCurrent, 4000, 0) X(cuCtxSetCurrent, 4000, 0) X(cuCtxGetDevice, 2000, 0)           \
  X(cuCtxSynchronize, 2000, 0) X(cuCtxGetLimit, 3010, 0) X(cuCtxSetLimit, 3010, 0)             \
  X(cuCtxGetStreamPriorityRange, 5050, 0) X(cuCtxEnablePeerAccess, 4000, 0)                    \
  X(cuCtxDisablePeerAccess, 4000, 0) X(cuMemAlloc, 3020, 0) X(cuMemFree, 3020, 0)              \
  X(cuMemAllocHost, 3020, 0) X(cuMemHostAlloc, 2020, 0) X(cuMemFreeHost, 2000, 0)              \
  X(cuMemHostRegister, 6050, 0) X(cuMemHostUnregister, 4000, 0)                                \
  X(cuMemHostGetDevicePointer, 3020, 0) X(cuMemHostGetFlags, 2030, 0)                          \
  X(cuMemAllocManaged, 6000, 0) X(cuMemAllocPitch, 3020, 0) X(cuMemGetInfo, 3020, 0)           \
  X(cuMemGetAddressRange, 3020, 0) X(cuPointerGetAttribute, 4000, 0)                           \
  X(cuPointerGetAttributes, 7000, 0) X(cuMemAllocAsync, 11020, 11020)                          \
  X(cuMemFreeAsync, 11020, 11020) X(cuMemAllocFromPoolAsync, 11020, 11020)                     \
  X(cuMemPoolTrimTo, 11020, 0) X(cuMemPoolGetAttribute, 11020, 0)                              \
  X(cuMemPoolSetAttribute, 11020, 0) X(cuMemPoolCreate, 11020, 0)                              \
  X(cuMemPoolDestroy, 11020, 0) X(cuMemcpy, 4000, 7000) X(cuMemcpyAsync, 4000, 7000)           \
  X(cuMemcpyHtoD, 3020, 7000) X(cuMemcpyDtoH, 3020, 7000) X(cuMemcpyDtoD, 3020, 7000)          \
  X(cuMemcpyHtoDAsync, 3020, 7000) X(cuMemcpyDtoHAsync, 3020, 7000)                            \
  X(cuMemcpyDtoDAsync, 3020, 7000) X(cuMemcpyPeer, 4000, 7000)                                 \
  X(cuMemcpyPeerAsync, 4000, 7000) X(cuMemcpy2DUnaligned, 3020, 7000)                          \
  X(cuMemcpy2DAsync, 3020, 7000) X(cuMemsetD8, 3020, 7000) X(cuMemsetD8Async, 3020, 7000)      \
  X(cuMemsetD2D8, 3020, 7000) X(cuMemsetD2D8Async, 3020, 7000) X(cuStreamCreate, 2000, 0)      \
  X(cuStreamCreateWithPriority, 5050, 0) X(cuStreamDestroy, 4000, 0)                           \
  X(cuStreamSynchronize, 2000, 7000) X(cuStreamQuery, 2000, 7000)                              \
  X(cuStreamWaitEvent, 3020, 7000) X(cuStreamGetPriority, 5050, 7000)                          \
  X(cuStreamGetFlags, 5050, 7000) X(cuStreamGetId, 12000, 12000)                               \
  X(cuStreamGetDevice, 12080, 12080) X(cuStreamAddCallback, 5000, 7000)                        \
  X(cuStreamIsCapturing, 10000, 10000) X(cuThreadExchangeStreamCaptureMode, 10010, 0)          \
  X(cuLaunchHostFunc, 10000, 10000) X(cuEventCreate, 2000, 0) X(cuEventRecord, 2000, 7000)     \
  X(cuEventRecordWithFlags, 11010, 11010) X(cuEventQuery, 2000, 0)                             \
  X(cuEventSynchronize, 2000, 0) X(cuEventElapsedTime, 12080, 0) X(cuEventDestroy, 4000, 0)    \
  X(cuLibraryLoadData, 12000, 0) X(cuLibraryUnload, 12000, 0) X(cuLibraryGetKernel, 12000, 0)  \
  X(cuLibraryGetGlobal, 12000, 0) X(cuLibraryGetManaged, 12000, 0)                             \
  X(cuKernelGetFunction, 12000, 0) X(cuKernelSetAttribute, 12000, 0)                           \
  X(cuFuncGetAttribute, 2020, 0) X(cuFuncSetAttribute, 9000, 0)                                \
  X(cuFuncSetCacheConfig, 3000, 0) X(cuLaunchKernel, 4000, 7000)                               \
  X(cuLaunchKernelEx, 11060, 11060) X(cuLaunchCooperativeKernel, 9000, 9000)                   \
  X(cuProfilerStart, 4000, 0) X(cuProfilerStop, 4000, 0)                                       \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000, 0)                             \
  X(cuOccupancyAvailableDynamicSMemPerBlock, 10020, 0) X(cuCtxResetPersistingL2Cache, 11000, 0) \
  X(cuStreamSetAttribute, 11000, 11000) X(cuStreamGetAttribute, 11000, 11000)                  \
  X(cuStreamCopyAttributes, 11000, 11000) X(cuStreamGetCaptureInfo, 12030, 12030)             \
  X(cuStreamBeginCapture, 10010, 10010) X(cuStreamEndCapture, 10000, 10000)                    \
  X(cuGraphInstantiateWithFlags, 11040, 0) X(cuGraphLaunch, 10000, 10000)                      \
  X(cuGraphDestroy, 10000, 0) X(cuGraphExecDestroy, 10000, 0) X(cuGraphGetNodes, 10000, 0)      \
  X(cuGraphCreate, 10000, 0) X(cuGraphClone, 10000, 0) X(cuGraphAddKernelNode, 12000, 0)         \
  X(cuGraphKernelNodeGetParams, 12000, 0) X(cuGraphKernelNodeSetParams, 12000, 0)                \
  X(cuGraphExecKernelNodeSetParams, 12000, 0) X(cuGraphAddMemcpyNode, 10000, 0)                  \
  X(cuGraphAddMemsetNode, 10000, 0) X(cuGraphAddHostNode, 10000, 0)                              \
  X(cuGraphAddEmptyNode, 10000, 0) X(cuGraphAddChildGraphNode, 10000, 0)                         \
  X(cuGraphAddEventRecordNode, 11010, 0) X(cuGraphAddEventWaitNode, 11010, 0)                    \
  X(cuGraphAddMemAllocNode, 11040, 0) X(cuGraphAddMemFreeNode, 11040, 0)                         \
  X(cuGraphAddDependencies, 12030, 0) X(cuGraphNodeGetType, 10000, 0)                            \
  X(cuGraphNodeGetDependencies, 12030, 0)

namespace simgpu_runtime {

struct DriverApi {
#define SIMGPU_RUNTIME_DECLARE_DRIVER_MEMBER(name, version, per_thread_version) \
  PFN_##name##_v##version name = nullptr;
  SIMGPU_RUNTIME_DRIVER_FUNCTIONS(SIMGPU_RUNTIME_DECLARE_DRIVER_MEMBER)
#undef SIMGPU_RUNTIME_DECLARE_DRIVER_MEMBER

  // The entry point itself, for cudaGetDriverEntryPoint(ByVersion).
  decltype(&::cuGetProcAddress_v2) cuGetProcAddress_v2 = nullptr;
};

enum class DefaultStream { legacy, per_thread };

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
