// Device queries: what the simulated GPUs look like (an H100-like part by
// default; count, memory, SM count, name and compute capability are configurable).
#include <cstdio>
#include <cstring>

#include "api_guard.h"
#include "driver_state.h"
#include "kernel_limits.h"

using namespace simgpu;

namespace {

// The per-block and per-SM limits are kernel_limits.h's.
constexpr int kSharedBytesPerBlock = 48 * 1024;
constexpr int kPciBusBase = 0x10;  // device i sits on PCI bus 0x10 + i

// Values for the attributes a program is likely to ask about; every other
// attribute below CU_DEVICE_ATTRIBUTE_MAX reads as 0 (feature absent).
int attribute_value(CUdevice_attribute attribute, const Device& device) {
  const DriverConfig& config = state().config;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
      return kMaxThreadsPerBlock;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
      return 64;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
      return 0x7fffffff;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
      return 65535;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
      return kSharedBytesPerBlock;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
      return 64 * 1024;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
      return 32;
    case CU_DEVICE_ATTRIBUTE_MAX_PITCH:
      return 0x7fffffff;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
      return kRegistersPerSm;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
      return 1'980'000;  // kHz
    case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
      return 512;
    case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      return config.sm_count;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
      return CU_COMPUTEMODE_DEFAULT;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
      return 1;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
      return kPciBusBase + device.physical;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      return 2'619'000;  // kHz
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      return 5120;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
      return kL2CacheBytes;
    case CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE:
      return kMaxPersistingL2Bytes;
    case CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE:
      return kMaxAccessPolicyWindowBytes;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      return kMaxThreadsPerSm;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
      return 2;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      return config.cc_major;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      return config.cc_minor;
    case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
      return kSharedBytesPerSm;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
      return kRegistersPerSm;
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD:
      return 0;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
      return kSharedBytesPerBlockOptin;
    case CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES:
      return 0;
    case CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
      return kMaxBlocksPerSm;
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED:
      return 0;
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
      return 1;
    case CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES:
      return CU_MEM_HANDLE_TYPE_NONE;
    case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
      return config.cc_major >= 9;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
      return 1024;
    case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
      return 0;
    case CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST:
      return 0;
    case CU_DEVICE_ATTRIBUTE_NUMA_ID:
      return -1;
    case CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID:
      return -1;
    default:
      return 0;
  }
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  return api_call([&] {
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = int(state().devices.size());
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  return api_call([&] {
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!find_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice dev) {
  return api_call([&] {
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!find_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(name, size_t(len), "%s", state().config.device_name.c_str());
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetAttribute(int* pi, CUdevice_attribute attrib, CUdevice dev) {
  return api_call([&] {
    if (!pi || attrib < 1 || attrib >= CU_DEVICE_ATTRIBUTE_MAX) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    *pi = attribute_value(attrib, *device);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  return api_call([&] {
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = device->total_bytes;
    return CUDA_SUCCESS;
  });
}

// CUDA 2.0 ABI with a 32-bit size: saturates like a 4 GiB-limited query would.
CUresult CUDAAPI cuDeviceTotalMem(unsigned int* bytes, CUdevice dev) {
  size_t total = 0;
  CUresult result = cuDeviceTotalMem_v2(&total, dev);
  if (result == CUDA_SUCCESS) *bytes = total > 0xffffffffu ? 0xffffffffu : unsigned(total);
  return result;
}

CUresult CUDAAPI cuDeviceComputeCapability(int* major, int* minor, CUdevice dev) {
  return api_call([&] {
    if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
    if (!find_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *major = state().config.cc_major;
    *minor = state().config.cc_minor;
    return CUDA_SUCCESS;
  });
}

// Deterministic per ordinal, so traces of two runs name the same devices.
CUresult CUDAAPI cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return api_call([&] {
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    static const unsigned char kPrefix[12] = {0x53, 0x49, 0x4d, 0x47, 0x50, 0x55,
                                              0x2d, 0x73, 0x69, 0x6d, 0x2d, 0x00};  // "SIMGPU-sim-"
    std::memcpy(uuid->bytes, kPrefix, sizeof(kPrefix));
    uint32_t ordinal = uint32_t(device->physical);  // the machine's device, whatever is visible
    std::memcpy(uuid->bytes + 12, &ordinal, sizeof(ordinal));
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  return api_call([&] {
    if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    Device* device = find_device(dev);
    if (!device) return CUDA_ERROR_INVALID_DEVICE;
    std::snprintf(pciBusId, size_t(len), "0000:%02x:00.0", kPciBusBase + device->physical);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetByPCIBusId(CUdevice* dev, const char* pciBusId) {
  return api_call([&] {
    if (!dev || !pciBusId) return CUDA_ERROR_INVALID_VALUE;
    unsigned domain = 0, bus = 0, slot = 0, function = 0;
    if (std::sscanf(pciBusId, "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4 || domain != 0 || slot != 0 ||
        function != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    const int physical = int(bus) - kPciBusBase;
    for (const auto& device : state().devices) {
      if (device->physical != physical) continue;
      *dev = device->ordinal;
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_DEVICE;
  });
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int* canAccessPeer, CUdevice dev, CUdevice peerDev) {
  return api_call([&] {
    if (!canAccessPeer) return CUDA_ERROR_INVALID_VALUE;
    if (!find_device(dev) || !find_device(peerDev)) return CUDA_ERROR_INVALID_DEVICE;
    *canAccessPeer = dev != peerDev;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                         CUdevice dstDevice) {
  return api_call([&] {
    if (!value) return CUDA_ERROR_INVALID_VALUE;
    if (!find_device(srcDevice) || !find_device(dstDevice) || srcDevice == dstDevice) {
      return CUDA_ERROR_INVALID_DEVICE;
    }
    switch (attrib) {
      case CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK:
        *value = 0;
        break;
      case CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED:
        *value = 1;
        break;
      case CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED:
        *value = 0;
        break;
      case CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED:
        *value = 0;
        break;
      case CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED:
        *value = 0;
        break;
      default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
