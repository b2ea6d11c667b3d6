// Device management: counting, selecting, synchronizing and resetting
// devices, peer access, limits, versions, profiler control.
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include "context.h"
#include "errors.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

static_assert(static_cast<int>(cudaLimitMallocHeapSize) ==
              static_cast<int>(CU_LIMIT_MALLOC_HEAP_SIZE));
static_assert(static_cast<int>(cudaDevAttrMultiProcessorCount) ==
              static_cast<int>(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
static_assert(static_cast<int>(cudaDevAttrMax) == static_cast<int>(CU_DEVICE_ATTRIBUTE_MAX));

namespace {

cudaError_t device_handle(const DriverApi* api, int device, CUdevice* handle) {
  CUresult result = api->cuDeviceGet(handle, device);
  return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidDevice;
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  if (count == nullptr) return finish(cudaErrorInvalidValue);
  *count = 0;
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  return finish(api->cuDeviceGetCount(count));
}

cudaError_t cudaSetDevice(int device) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  return finish(select_device(api, device));
}

cudaError_t cudaInitDevice(int device, unsigned int /*deviceFlags*/, unsigned int /*flags*/) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUcontext context = nullptr;
  return finish(primary_context(api, device, &context));
}

cudaError_t cudaGetDevice(int* device) {
  if (device == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  return finish(current_device(api, device));
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  int device = 0;
  current_device(api, &device);
  CUdevice handle = 0;
  if (cudaError_t error = device_handle(api, device, &handle)) return finish(error);
  // cudaDeviceMapHost is always on with unified addressing; the driver's
  // primary-context flags only carry the scheduling and local-memory bits.
  return finish(api->cuDevicePrimaryCtxSetFlags(handle, flags & ~cudaDeviceMapHost));
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  if (flags == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  int device = 0;
  current_device(api, &device);
  CUdevice handle = 0;
  if (cudaError_t error = device_handle(api, device, &handle)) return finish(error);
  unsigned int context_flags = 0;
  int active = 0;
  if (CUresult result = api->cuDevicePrimaryCtxGetState(handle, &context_flags, &active)) {
    return finish(result);
  }
  *flags = context_flags | cudaDeviceMapHost;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, enum cudaDeviceAttr attr, int device) {
  if (value == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUdevice handle = 0;
  if (cudaError_t error = device_handle(api, device, &handle)) return finish(error);
  return finish(api->cuDeviceGetAttribute(value, static_cast<CUdevice_attribute>(attr), handle));
}

cudaError_t cudaDeviceSynchronize(void) {
  return traced("cudaDeviceSynchronize", [] {
    const DriverApi* api = nullptr;
    if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
    return finish(api->cuCtxSynchronize());
  });
}

cudaError_t cudaDeviceReset(void) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  return finish(reset_current_device(api));
}

cudaError_t cudaDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  if (canAccessPeer == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUdevice handle = 0;
  CUdevice peer_handle = 0;
  if (cudaError_t error = device_handle(api, device, &handle)) return finish(error);
  if (cudaError_t error = device_handle(api, peerDevice, &peer_handle)) return finish(error);
  return finish(api->cuDeviceCanAccessPeer(canAccessPeer, handle, peer_handle));
}

cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  CUcontext peer = nullptr;
  if (cudaError_t error = primary_context(api, peerDevice, &peer)) return finish(error);
  return finish(api->cuCtxEnablePeerAccess(peer, flags));
}

cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  CUcontext peer = nullptr;
  if (cudaError_t error = primary_context(api, peerDevice, &peer)) return finish(error);
  return finish(api->cuCtxDisablePeerAccess(peer));
}

cudaError_t cudaDeviceGetLimit(size_t* pValue, enum cudaLimit limit) {
  if (pValue == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  return finish(api->cuCtxGetLimit(pValue, static_cast<CUlimit>(limit)));
}

cudaError_t cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  return finish(api->cuCtxSetLimit(static_cast<CUlimit>(limit), value));
}

cudaError_t cudaCtxResetPersistingL2Cache(void) {
  return with_context(DefaultStream::legacy,
                      [](const DriverApi& api) { return api.cuCtxResetPersistingL2Cache(); });
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  return finish(api->cuCtxGetStreamPriorityRange(leastPriority, greatestPriority));
}

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  CUdevice handle = 0;
  if (cudaError_t error = device_handle(api, device, &handle)) return finish(error);
  return finish(api->cuDeviceGetPCIBusId(pciBusId, len, handle));
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return finish(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return finish(cudaErrorInvalidValue);
  // Documented: without a driver the version is 0 and the call succeeds.
  *driverVersion = 0;
  // A driver whose cuInit failed (no device) still reports its version.
  const DriverApi* api = nullptr;
  enter(DefaultStream::legacy, &api);
  if (api->cuDriverGetVersion == nullptr) return cudaSuccess;
  return finish(api->cuDriverGetVersion(driverVersion));
}

cudaError_t cudaProfilerStart(void) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  return finish(api->cuProfilerStart());
}

cudaError_t cudaProfilerStop(void) {
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(DefaultStream::legacy, &api)) return finish(error);
  return finish(api->cuProfilerStop());
}

}  // extern "C"
