// cudaGetDeviceProperties: a cudaDeviceProp assembled from driver queries
// (name, UUID, total memory, and one cuDeviceGetAttribute per field), the
// way the real runtime builds it. The 2D and layered texture/surface limits
// are left zero: nothing that runs on the simulator uses textures.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>

#include "context.h"
#include "errors.h"

using namespace simgpu_runtime;

namespace {

struct IntProperty {
  cudaDeviceAttr attribute;
  int cudaDeviceProp::*field;
};

struct IntArrayProperty {
  cudaDeviceAttr attribute;
  int (cudaDeviceProp::*field)[3];
  int index;
};

struct SizeProperty {
  cudaDeviceAttr attribute;
  std::size_t cudaDeviceProp::*field;
};

constexpr IntProperty kIntProperties[] = {
    {cudaDevAttrMaxRegistersPerBlock, &cudaDeviceProp::regsPerBlock},
    {cudaDevAttrWarpSize, &cudaDeviceProp::warpSize},
    {cudaDevAttrMaxThreadsPerBlock, &cudaDeviceProp::maxThreadsPerBlock},
    {cudaDevAttrComputeCapabilityMajor, &cudaDeviceProp::major},
    {cudaDevAttrComputeCapabilityMinor, &cudaDeviceProp::minor},
    {cudaDevAttrMultiProcessorCount, &cudaDeviceProp::multiProcessorCount},
    {cudaDevAttrIntegrated, &cudaDeviceProp::integrated},
    {cudaDevAttrCanMapHostMemory, &cudaDeviceProp::canMapHostMemory},
    {cudaDevAttrMaxTexture1DWidth, &cudaDeviceProp::maxTexture1D},
    {cudaDevAttrMaxTexture1DMipmappedWidth, &cudaDeviceProp::maxTexture1DMipmap},
    {cudaDevAttrMaxTextureCubemapWidth, &cudaDeviceProp::maxTextureCubemap},
    {cudaDevAttrMaxSurface1DWidth, &cudaDeviceProp::maxSurface1D},
    {cudaDevAttrMaxSurfaceCubemapWidth, &cudaDeviceProp::maxSurfaceCubemap},
    {cudaDevAttrConcurrentKernels, &cudaDeviceProp::concurrentKernels},
    {cudaDevAttrEccEnabled, &cudaDeviceProp::ECCEnabled},
    {cudaDevAttrPciBusId, &cudaDeviceProp::pciBusID},
    {cudaDevAttrPciDeviceId, &cudaDeviceProp::pciDeviceID},
    {cudaDevAttrPciDomainId, &cudaDeviceProp::pciDomainID},
    {cudaDevAttrTccDriver, &cudaDeviceProp::tccDriver},
    {cudaDevAttrAsyncEngineCount, &cudaDeviceProp::asyncEngineCount},
    {cudaDevAttrUnifiedAddressing, &cudaDeviceProp::unifiedAddressing},
    {cudaDevAttrGlobalMemoryBusWidth, &cudaDeviceProp::memoryBusWidth},
    {cudaDevAttrL2CacheSize, &cudaDeviceProp::l2CacheSize},
    {cudaDevAttrMaxPersistingL2CacheSize, &cudaDeviceProp::persistingL2CacheMaxSize},
    {cudaDevAttrMaxThreadsPerMultiProcessor, &cudaDeviceProp::maxThreadsPerMultiProcessor},
    {cudaDevAttrStreamPrioritiesSupported, &cudaDeviceProp::streamPrioritiesSupported},
    {cudaDevAttrGlobalL1CacheSupported, &cudaDeviceProp::globalL1CacheSupported},
    {cudaDevAttrLocalL1CacheSupported, &cudaDeviceProp::localL1CacheSupported},
    {cudaDevAttrMaxRegistersPerMultiprocessor, &cudaDeviceProp::regsPerMultiprocessor},
    {cudaDevAttrManagedMemory, &cudaDeviceProp::managedMemory},
    {cudaDevAttrIsMultiGpuBoard, &cudaDeviceProp::isMultiGpuBoard},
    {cudaDevAttrMultiGpuBoardGroupID, &cudaDeviceProp::multiGpuBoardGroupID},
    {cudaDevAttrHostNativeAtomicSupported, &cudaDeviceProp::hostNativeAtomicSupported},
    {cudaDevAttrPageableMemoryAccess, &cudaDeviceProp::pageableMemoryAccess},
    {cudaDevAttrConcurrentManagedAccess, &cudaDeviceProp::concurrentManagedAccess},
    {cudaDevAttrComputePreemptionSupported, &cudaDeviceProp::computePreemptionSupported},
    {cudaDevAttrCanUseHostPointerForRegisteredMem,
     &cudaDeviceProp::canUseHostPointerForRegisteredMem},
    {cudaDevAttrCooperativeLaunch, &cudaDeviceProp::cooperativeLaunch},
    {cudaDevAttrPageableMemoryAccessUsesHostPageTables,
     &cudaDeviceProp::pageableMemoryAccessUsesHostPageTables},
    {cudaDevAttrDirectManagedMemAccessFromHost, &cudaDeviceProp::directManagedMemAccessFromHost},
    {cudaDevAttrMaxBlocksPerMultiprocessor, &cudaDeviceProp::maxBlocksPerMultiProcessor},
    {cudaDevAttrMaxAccessPolicyWindowSize, &cudaDeviceProp::accessPolicyMaxWindowSize},
    {cudaDevAttrHostRegisterSupported, &cudaDeviceProp::hostRegisterSupported},
    {cudaDevAttrSparseCudaArraySupported, &cudaDeviceProp::sparseCudaArraySupported},
    {cudaDevAttrHostRegisterReadOnlySupported, &cudaDeviceProp::hostRegisterReadOnlySupported},
    {cudaDevAttrTimelineSemaphoreInteropSupported,
     &cudaDeviceProp::timelineSemaphoreInteropSupported},
    {cudaDevAttrMemoryPoolsSupported, &cudaDeviceProp::memoryPoolsSupported},
    {cudaDevAttrGPUDirectRDMASupported, &cudaDeviceProp::gpuDirectRDMASupported},
    {cudaDevAttrGPUDirectRDMAWritesOrdering, &cudaDeviceProp::gpuDirectRDMAWritesOrdering},
    {cudaDevAttrDeferredMappingCudaArraySupported,
     &cudaDeviceProp::deferredMappingCudaArraySupported},
    {cudaDevAttrIpcEventSupport, &cudaDeviceProp::ipcEventSupported},
    {cudaDevAttrClusterLaunch, &cudaDeviceProp::clusterLaunch},
    {cudaDevAttrNumaConfig, &cudaDeviceProp::deviceNumaConfig},
    {cudaDevAttrNumaId, &cudaDeviceProp::deviceNumaId},
    {cudaDevAttrMpsEnabled, &cudaDeviceProp::mpsEnabled},
    {cudaDevAttrHostNumaId, &cudaDeviceProp::hostNumaId},
    {cudaDevAttrHostNumaMultinodeIpcSupported, &cudaDeviceProp::hostNumaMultinodeIpcSupported},
};

constexpr IntArrayProperty kIntArrayProperties[] = {
    {cudaDevAttrMaxBlockDimX, &cudaDeviceProp::maxThreadsDim, 0},
    {cudaDevAttrMaxBlockDimY, &cudaDeviceProp::maxThreadsDim, 1},
    {cudaDevAttrMaxBlockDimZ, &cudaDeviceProp::maxThreadsDim, 2},
    {cudaDevAttrMaxGridDimX, &cudaDeviceProp::maxGridSize, 0},
    {cudaDevAttrMaxGridDimY, &cudaDeviceProp::maxGridSize, 1},
    {cudaDevAttrMaxGridDimZ, &cudaDeviceProp::maxGridSize, 2},
    {cudaDevAttrMaxTexture3DWidth, &cudaDeviceProp::maxTexture3D, 0},
    {cudaDevAttrMaxTexture3DHeight, &cudaDeviceProp::maxTexture3D, 1},
    {cudaDevAttrMaxTexture3DDepth, &cudaDeviceProp::maxTexture3D, 2},
    {cudaDevAttrMaxSurface3DWidth, &cudaDeviceProp::maxSurface3D, 0},
    {cudaDevAttrMaxSurface3DHeight, &cudaDeviceProp::maxSurface3D, 1},
    {cudaDevAttrMaxSurface3DDepth, &cudaDeviceProp::maxSurface3D, 2},
};

constexpr SizeProperty kSizeProperties[] = {
    {cudaDevAttrMaxSharedMemoryPerBlock, &cudaDeviceProp::sharedMemPerBlock},
    {cudaDevAttrMaxPitch, &cudaDeviceProp::memPitch},
    {cudaDevAttrTotalConstantMemory, &cudaDeviceProp::totalConstMem},
    {cudaDevAttrTextureAlignment, &cudaDeviceProp::textureAlignment},
    {cudaDevAttrTexturePitchAlignment, &cudaDeviceProp::texturePitchAlignment},
    {cudaDevAttrSurfaceAlignment, &cudaDeviceProp::surfaceAlignment},
    {cudaDevAttrMaxSharedMemoryPerMultiprocessor, &cudaDeviceProp::sharedMemPerMultiprocessor},
    {cudaDevAttrMaxSharedMemoryPerBlockOptin, &cudaDeviceProp::sharedMemPerBlockOptin},
    {cudaDevAttrReservedSharedMemoryPerBlock, &cudaDeviceProp::reservedSharedMemPerBlock},
};

// An attribute the driver does not know reads as 0, like a feature the device
// lacks; only the device itself being invalid fails the whole call.
int attribute_or_zero(const DriverApi* api, cudaDeviceAttr attribute, CUdevice device) {
  int value = 0;
  if (api->cuDeviceGetAttribute(&value, static_cast<CUdevice_attribute>(attribute), device) !=
      CUDA_SUCCESS) {
    return 0;
  }
  return value;
}

}  // namespace

extern "C" cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp* prop, int device) {
  if (prop == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUdevice handle = 0;
  if (api->cuDeviceGet(&handle, device) != CUDA_SUCCESS) return finish(cudaErrorInvalidDevice);

  std::memset(prop, 0, sizeof(*prop));
  if (CUresult result = api->cuDeviceGetName(prop->name, sizeof(prop->name), handle)) {
    return finish(result);
  }
  size_t total_bytes = 0;
  if (CUresult result = api->cuDeviceTotalMem(&total_bytes, handle)) return finish(result);
  prop->totalGlobalMem = total_bytes;
  CUuuid uuid{};
  if (api->cuDeviceGetUuid(&uuid, handle) == CUDA_SUCCESS) {
    static_assert(sizeof(prop->uuid.bytes) == sizeof(uuid.bytes));
    std::memcpy(prop->uuid.bytes, uuid.bytes, sizeof(uuid.bytes));
  }

  for (const IntProperty& property : kIntProperties) {
    prop->*property.field = attribute_or_zero(api, property.attribute, handle);
  }
  for (const IntArrayProperty& property : kIntArrayProperties) {
    (prop->*property.field)[property.index] = attribute_or_zero(api, property.attribute, handle);
  }
  for (const SizeProperty& property : kSizeProperties) {
    prop->*property.field =
        static_cast<std::size_t>(attribute_or_zero(api, property.attribute, handle));
  }
  prop->gpuDirectRDMAFlushWritesOptions = static_cast<unsigned int>(
      attribute_or_zero(api, cudaDevAttrGPUDirectRDMAFlushWritesOptions, handle));
  prop->memoryPoolSupportedHandleTypes = static_cast<unsigned int>(
      attribute_or_zero(api, cudaDevAttrMemoryPoolSupportedHandleTypes, handle));
  prop->gpuPciDeviceID =
      static_cast<unsigned int>(attribute_or_zero(api, cudaDevAttrGpuPciDeviceId, handle));
  prop->gpuPciSubsystemID =
      static_cast<unsigned int>(attribute_or_zero(api, cudaDevAttrGpuPciSubsystemId, handle));
  return cudaSuccess;
}
