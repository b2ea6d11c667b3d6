// Device kernels of the simulated NCCL, with the names and the parameter type
// of the real library's (NCCL 2.28: one by-value argument block,
// ncclDevKernelArgsStorage<4096>), so a profiler sees the same mangled names:
// _Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE.
// The simulator never runs device code; the bodies only have to compile.
template <unsigned long Bytes>
struct ncclDevKernelArgsStorage {
  alignas(16) char storage[Bytes];
};

using Args = ncclDevKernelArgsStorage<4096>;

// hipcc builds the same kernels for the simulated librccl.so.1.
#if defined(__HIP__)
#include <hip/hip_runtime.h>
#define SIMNCCL_GRID_CONSTANT
#define SIMNCCL_TRAP() __builtin_trap()
#else
#define SIMNCCL_GRID_CONSTANT __grid_constant__
#define SIMNCCL_TRAP() asm volatile("trap;")
#endif

#define SIMNCCL_KERNEL(name)                                                   \
  __global__ void name(const SIMNCCL_GRID_CONSTANT Args args) {              \
    if (args.storage[threadIdx.x % 4096] == 0x7f) SIMNCCL_TRAP();            \
  }

#define SIMNCCL_SUM_KERNELS(collective)              \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_bf16_RING_LL) \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_f16_RING_LL)  \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_f32_RING_LL)  \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_f64_RING_LL)  \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_u32_RING_LL)  \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_u64_RING_LL)  \
  SIMNCCL_KERNEL(ncclDevKernel_##collective##_Sum_u8_RING_LL)

SIMNCCL_SUM_KERNELS(AllReduce)
SIMNCCL_SUM_KERNELS(ReduceScatter)
SIMNCCL_SUM_KERNELS(Reduce)
SIMNCCL_KERNEL(ncclDevKernel_AllGather_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_Broadcast_RING_LL)
SIMNCCL_KERNEL(ncclDevKernel_SendRecv)
SIMNCCL_KERNEL(ncclDevKernel_Generic)
