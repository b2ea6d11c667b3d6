// The CUDA APIs the shim records, each with the small id event records carry
// in ApiSpan::api. Ids are part of no file format (every section defines
// them with ApiDef records), but keep them stable anyway: append, never
// renumber. One id per API as users know it: cuMemcpyHtoD_v2 and
// cuMemcpyHtoD_v2_ptds are both "cuMemcpyHtoD" (the per-thread variant sets
// kApiPerThreadStream in the record instead).
#pragma once

#include <cstdint>

#define PROFLAUNCH_CUDA_DRIVER_APIS(X) \
  X(1, cuInit)                         \
  X(2, cuGetProcAddress)               \
  X(10, cuLaunchKernel)                \
  X(11, cuLaunchKernelEx)              \
  X(12, cuLaunchCooperativeKernel)     \
  X(20, cuMemcpy)                      \
  X(21, cuMemcpyAsync)                 \
  X(22, cuMemcpyHtoD)                  \
  X(23, cuMemcpyDtoH)                  \
  X(24, cuMemcpyDtoD)                  \
  X(25, cuMemcpyHtoDAsync)             \
  X(26, cuMemcpyDtoHAsync)             \
  X(27, cuMemcpyDtoDAsync)             \
  X(28, cuMemcpyPeer)                  \
  X(29, cuMemcpyPeerAsync)             \
  X(40, cuMemsetD8)                    \
  X(41, cuMemsetD16)                   \
  X(42, cuMemsetD32)                   \
  X(43, cuMemsetD8Async)               \
  X(44, cuMemsetD16Async)              \
  X(45, cuMemsetD32Async)              \
  X(60, cuCtxSynchronize)              \
  X(61, cuStreamSynchronize)           \
  X(62, cuEventSynchronize)            \
  X(63, cuStreamWaitEvent)             \
  X(80, cuStreamCreate)                \
  X(81, cuStreamCreateWithPriority)    \
  X(82, cuStreamDestroy)               \
  X(83, cuEventCreate)                 \
  X(84, cuEventDestroy)                \
  X(85, cuEventRecord)                 \
  X(86, cuEventRecordWithFlags)        \
  X(87, cuCtxCreate)                   \
  X(88, cuCtxDestroy)                  \
  X(89, cuDevicePrimaryCtxRetain)      \
  X(90, cuDevicePrimaryCtxRelease)     \
  X(91, cuDevicePrimaryCtxReset)       \
  X(100, cuModuleLoadData)             \
  X(101, cuModuleLoadDataEx)           \
  X(102, cuModuleLoadFatBinary)        \
  X(103, cuModuleUnload)               \
  X(104, cuModuleGetFunction)          \
  X(105, cuLibraryLoadData)            \
  X(106, cuLibraryUnload)              \
  X(107, cuLibraryGetKernel)           \
  X(108, cuKernelGetFunction)          \
  X(120, cuMemAlloc)                   \
  X(121, cuMemFree)                    \
  X(122, cuMemAllocPitch)              \
  X(123, cuMemAllocManaged)            \
  X(124, cuMemAllocHost)               \
  X(125, cuMemHostAlloc)               \
  X(126, cuMemFreeHost)                \
  X(127, cuMemHostRegister)            \
  X(128, cuMemHostUnregister)          \
  X(129, cuMemGetInfo)                 \
  X(130, cuMemAllocAsync)              \
  X(131, cuMemAllocFromPoolAsync)      \
  X(132, cuMemFreeAsync)               \
  X(133, cuMemPoolTrimTo)              \
  X(140, cuMemCreate)                  \
  X(141, cuMemRelease)                 \
  X(142, cuMemMap)                     \
  X(143, cuMemUnmap)                   \
  X(144, cuMemAddressReserve)          \
  X(145, cuMemAddressFree)             \
  X(146, cuMemSetAccess)

#define PROFLAUNCH_CUDA_RUNTIME_APIS(X) \
  X(1000, cudaLaunchKernel)             \
  X(1001, cudaLaunchKernelExC)          \
  X(1002, cudaLaunchCooperativeKernel)  \
  X(1010, cudaMemcpy)                   \
  X(1011, cudaMemcpyAsync)              \
  X(1012, cudaMemcpyPeer)               \
  X(1013, cudaMemcpyPeerAsync)          \
  X(1020, cudaMemset)                   \
  X(1021, cudaMemsetAsync)              \
  X(1030, cudaDeviceSynchronize)        \
  X(1031, cudaStreamSynchronize)        \
  X(1032, cudaEventSynchronize)         \
  X(1033, cudaStreamWaitEvent)          \
  X(1040, cudaStreamCreate)             \
  X(1041, cudaStreamCreateWithFlags)    \
  X(1042, cudaStreamCreateWithPriority) \
  X(1043, cudaStreamDestroy)            \
  X(1044, cudaEventCreate)              \
  X(1045, cudaEventCreateWithFlags)     \
  X(1046, cudaEventDestroy)             \
  X(1047, cudaEventRecord)              \
  X(1050, cudaMalloc)                   \
  X(1051, cudaFree)                     \
  X(1052, cudaMallocAsync)              \
  X(1053, cudaFreeAsync)                \
  X(1054, cudaMallocFromPoolAsync)      \
  X(1055, cudaMallocManaged)            \
  X(1056, cudaMallocHost)               \
  X(1057, cudaHostAlloc)                \
  X(1058, cudaFreeHost)                 \
  X(1059, cudaMallocPitch)              \
  X(1060, cudaMalloc3D)                 \
  X(1061, cudaHostRegister)             \
  X(1062, cudaHostUnregister)           \
  X(1063, cudaMemGetInfo)               \
  X(1064, cudaMemPoolTrimTo)

namespace proflaunch::cuda {

enum class Api : uint16_t {
#define PROFLAUNCH_API_ENUM(id, name) name = id,
  PROFLAUNCH_CUDA_DRIVER_APIS(PROFLAUNCH_API_ENUM)
  PROFLAUNCH_CUDA_RUNTIME_APIS(PROFLAUNCH_API_ENUM)
#undef PROFLAUNCH_API_ENUM
};

inline uint16_t api_id(Api api) { return static_cast<uint16_t>(api); }

// Writes ApiDef records for every API above (cold; once per section).
void define_cuda_apis() noexcept;

}  // namespace proflaunch::cuda
