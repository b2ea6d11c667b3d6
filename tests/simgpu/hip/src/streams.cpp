// Devices, streams, events, synchronization, stream capture and graphs.
// HIP numbers stream flags, event flags, capture modes and capture statuses
// as the CUDA driver does (hip_runtime_api.h), so they pass through.
#include <algorithm>
#include <cstring>

#include "amd_devices.h"
#include "hip_state.h"

using namespace simhip;

namespace {

constexpr int kWarpSize = 64;  // a wavefront
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kSharedBytesPerBlock = 64 * 1024;  // LDS

int sm_count(int device) {
  int count = 0;
  cuDeviceGetAttribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
  return count;
}

size_t total_bytes(int device) {
  size_t bytes = 0;
  cuDeviceTotalMem(&bytes, device);
  return bytes;
}

// "gfx90a:sramecc+:xnack-" -> 90a's gcnArch number 910 (the deprecated field).
int gcn_arch_number(const std::string& arch) {
  if (arch.rfind("gfx", 0) != 0) return 0;
  const std::string processor = arch.substr(3, arch.find(':') == std::string::npos ? std::string::npos : arch.find(':') - 3);
  int number = 0;
  for (char c : processor) number = number * 10 + (c >= '0' && c <= '9' ? c - '0' : (c - 'a' + 10) % 10);
  return number;
}

hipError_t check_device(int device) {
  if (hipError_t ready = initialize(); ready != hipSuccess) return ready;
  return device >= 0 && device < machine().device_count ? hipSuccess : hipErrorInvalidDevice;
}

}  // namespace

extern "C" {

// ---- devices

hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int deviceId) {
  return api([&] {
    if (prop == nullptr) return hipErrorInvalidValue;
    if (hipError_t r = check_device(deviceId); r != hipSuccess) return r;
    std::memset(prop, 0, sizeof *prop);
    std::strncpy(prop->name, machine().name.c_str(), sizeof prop->name - 1);
    std::strncpy(prop->gcnArchName, machine().arch.c_str(), sizeof prop->gcnArchName - 1);
    prop->gcnArch = gcn_arch_number(machine().arch);
    prop->totalGlobalMem = total_bytes(deviceId);
    prop->sharedMemPerBlock = kSharedBytesPerBlock;
    prop->regsPerBlock = 65536;
    prop->warpSize = kWarpSize;
    prop->maxThreadsPerBlock = kMaxThreadsPerBlock;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = prop->maxThreadsDim[2] = 1024;
    prop->maxGridSize[0] = 0x7fffffff;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->clockRate = 1'700'000;
    prop->memoryClockRate = 1'600'000;
    prop->memoryBusWidth = 4096;
    prop->totalConstMem = 2ull << 30;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = sm_count(deviceId);
    prop->l2CacheSize = 8 << 20;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->clockInstructionRate = 1'000'000;
    prop->concurrentKernels = 1;
    prop->pciBusID = deviceId + 1;
    prop->maxSharedMemoryPerMultiProcessor = kSharedBytesPerBlock;
    prop->canMapHostMemory = 1;
    prop->cooperativeLaunch = 1;
    prop->cooperativeMultiDeviceLaunch = 1;
    prop->managedMemory = 1;
    prop->concurrentManagedAccess = 1;
    prop->isLargeBar = 1;
    prop->memPitch = 0x7fffffff;
    prop->textureAlignment = 256;
    prop->texturePitchAlignment = 256;
    return hipSuccess;
  });
}

hipError_t hipDeviceGetAttribute(int* pi, hipDeviceAttribute_t attr, int deviceId) {
  return api([&] {
    if (pi == nullptr) return hipErrorInvalidValue;
    if (hipError_t r = check_device(deviceId); r != hipSuccess) return r;
    switch (attr) {
      case hipDeviceAttributeMultiprocessorCount: *pi = sm_count(deviceId); return hipSuccess;
      case hipDeviceAttributeWarpSize: *pi = kWarpSize; return hipSuccess;
      case hipDeviceAttributeMaxThreadsPerBlock: *pi = kMaxThreadsPerBlock; return hipSuccess;
      case hipDeviceAttributeMaxBlockDimX:
      case hipDeviceAttributeMaxBlockDimY:
      case hipDeviceAttributeMaxBlockDimZ: *pi = 1024; return hipSuccess;
      case hipDeviceAttributeMaxGridDimX: *pi = 0x7fffffff; return hipSuccess;
      case hipDeviceAttributeMaxGridDimY:
      case hipDeviceAttributeMaxGridDimZ: *pi = 65535; return hipSuccess;
      case hipDeviceAttributeMaxSharedMemoryPerBlock:
      case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: *pi = kSharedBytesPerBlock; return hipSuccess;
      case hipDeviceAttributeComputeCapabilityMajor: *pi = 9; return hipSuccess;
      case hipDeviceAttributeComputeCapabilityMinor: *pi = 0; return hipSuccess;
      case hipDeviceAttributeClockRate: *pi = 1'700'000; return hipSuccess;
      case hipDeviceAttributeL2CacheSize: *pi = 8 << 20; return hipSuccess;
      case hipDeviceAttributeMaxThreadsPerMultiProcessor: *pi = 2048; return hipSuccess;
      case hipDeviceAttributeConcurrentKernels:
      case hipDeviceAttributeManagedMemory:
      case hipDeviceAttributeCooperativeLaunch:
      case hipDeviceAttributeCanMapHostMemory: *pi = 1; return hipSuccess;
      case hipDeviceAttributePciBusId: *pi = deviceId + 1; return hipSuccess;
      case hipDeviceAttributeIntegrated: *pi = 0; return hipSuccess;
      // 1 or 0 (hip_runtime_api.h): the simulated device has no image or
      // texture support (those APIs return hipErrorNotSupported), so 0.
      case hipDeviceAttributeImageSupport: *pi = 0; return hipSuccess;
      default: return hipErrorInvalidValue;
    }
  });
}

hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device) {
  return api([&] {
    if (name == nullptr || len <= 0) return hipErrorInvalidValue;
    if (hipError_t r = check_device(device); r != hipSuccess) return r;
    std::strncpy(name, machine().name.c_str(), size_t(len) - 1);
    name[len - 1] = '\0';
    return hipSuccess;
  });
}

// As ROCm's runtime: the 16 bytes are the hex digits of ROCr's UUID text
// "GPU-<16 hex>" (the device's unique id), not binary.
hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t device) {
  return api([&] {
    if (hipError_t r = check_device(device); r != hipSuccess) return r;
    if (uuid == nullptr) return hipErrorInvalidValue;
    const std::string text = amd_uuid_text(physical_device(device));
    std::memcpy(uuid->bytes, text.c_str() + 4, sizeof uuid->bytes);
    return hipSuccess;
  });
}

hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  return api([&] {
    if (bytes == nullptr) return hipErrorInvalidValue;
    if (hipError_t r = check_device(device); r != hipSuccess) return r;
    *bytes = total_bytes(device);
    return hipSuccess;
  });
}

hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
  return api([&] {
    if (device == nullptr) return hipErrorInvalidValue;
    if (hipError_t r = check_device(ordinal); r != hipSuccess) return r;
    *device = ordinal;
    return hipSuccess;
  });
}

hipError_t hipDeviceComputeCapability(int* major, int* minor, hipDevice_t device) {
  return api([&] {
    if (major == nullptr || minor == nullptr) return hipErrorInvalidValue;
    if (hipError_t r = check_device(device); r != hipSuccess) return r;
    *major = 9;
    *minor = 0;
    return hipSuccess;
  });
}

hipError_t hipSetDeviceFlags(unsigned flags) {
  return device_api([&] { return flags > 0x1f ? hipErrorInvalidValue : hipSuccess; });
}

hipError_t hipDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return device_api([&] { return to_hip(cuCtxGetStreamPriorityRange(leastPriority, greatestPriority)); });
}

hipError_t hipDeviceCanAccessPeer(int* canAccessPeer, int deviceId, int peerDeviceId) {
  return api([&] {
    if (canAccessPeer == nullptr) return hipErrorInvalidValue;
    if (hipError_t r = check_device(deviceId); r != hipSuccess) return r;
    if (hipError_t r = check_device(peerDeviceId); r != hipSuccess) return r;
    *canAccessPeer = deviceId != peerDeviceId;
    return hipSuccess;
  });
}

hipError_t hipDeviceEnablePeerAccess(int peerDeviceId, unsigned int flags) {
  return device_api([&] {
    if (hipError_t r = check_device(peerDeviceId); r != hipSuccess) return r;
    const int self = current_device();
    if (hipError_t r = set_current_device(peerDeviceId); r != hipSuccess) return r;
    CUcontext peer = primary_context(peerDeviceId);
    if (hipError_t r = set_current_device(self); r != hipSuccess) return r;
    return to_hip(cuCtxEnablePeerAccess(peer, flags));
  });
}

// hipErrorPeerAccessNotEnabled unless the current device enabled access to
// the peer (hip_runtime_api.h); an invalid ordinal: hipErrorInvalidDevice.
hipError_t hipDeviceDisablePeerAccess(int peerDeviceId) {
  return device_api([&] {
    if (hipError_t r = check_device(peerDeviceId); r != hipSuccess) return r;
    const int self = current_device();
    if (hipError_t r = set_current_device(peerDeviceId); r != hipSuccess) return r;
    CUcontext peer = primary_context(peerDeviceId);
    if (hipError_t r = set_current_device(self); r != hipSuccess) return r;
    return to_hip(cuCtxDisablePeerAccess(peer));
  });
}

hipError_t hipDeviceSynchronize(void) { return device_api([&] { return to_hip(cuCtxSynchronize()); }); }

// Destroys every allocation and stream of the device's primary context;
// the device is usable again at once.
hipError_t hipDeviceReset(void) {
  return device_api([&] {
    const int device = current_device();
    if (CUresult r = cuDevicePrimaryCtxReset(device); r != CUDA_SUCCESS) return to_hip(r);
    CUcontext context = nullptr;
    if (CUresult r = cuDevicePrimaryCtxRetain(&context, device); r != CUDA_SUCCESS) return to_hip(r);
    return to_hip(cuCtxSetCurrent(context));
  });
}

// ---- streams

hipError_t hipStreamCreateWithPriority(hipStream_t* stream, unsigned int flags, int priority) {
  return device_api([&] {
    if (stream == nullptr || flags > hipStreamNonBlocking) return hipErrorInvalidValue;
    CUstream created = nullptr;
    if (CUresult r = cuStreamCreateWithPriority(&created, flags, priority); r != CUDA_SUCCESS) return to_hip(r);
    *stream = reinterpret_cast<hipStream_t>(created);
    return hipSuccess;
  });
}
hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned int flags) {
  return hipStreamCreateWithPriority(stream, flags, 0);
}
hipError_t hipStreamCreate(hipStream_t* stream) { return hipStreamCreateWithPriority(stream, hipStreamDefault, 0); }

hipError_t hipStreamDestroy(hipStream_t stream) {
  return device_api([&] {
    if (stream == nullptr || stream == hipStreamPerThread) return hipErrorInvalidResourceHandle;
    return to_hip(cuStreamDestroy(cu(stream)));
  });
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
  return device_api([&] { return to_hip(cuStreamSynchronize(cu(stream))); });
}
hipError_t hipStreamSynchronize_spt(hipStream_t stream) {
  return hipStreamSynchronize(stream == nullptr ? hipStreamPerThread : stream);
}

hipError_t hipStreamQuery(hipStream_t stream) { return device_api([&] { return to_hip(cuStreamQuery(cu(stream))); }); }
hipError_t hipStreamQuery_spt(hipStream_t stream) {
  return hipStreamQuery(stream == nullptr ? hipStreamPerThread : stream);
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
  return device_api([&] { return to_hip(cuStreamWaitEvent(cu(stream), cu(event), flags)); });
}
hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event, unsigned int flags) {
  return hipStreamWaitEvent(stream == nullptr ? hipStreamPerThread : stream, event, flags);
}

hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int* flags) {
  return device_api([&] { return to_hip(cuStreamGetFlags(cu(stream), flags)); });
}

hipError_t hipStreamGetPriority(hipStream_t stream, int* priority) {
  return device_api([&] { return to_hip(cuStreamGetPriority(cu(stream), priority)); });
}

int hipGetStreamDeviceId(hipStream_t stream) {
  (void)stream;
  return current_device();
}

// hipStreamCallback_t and CUstreamCallback have the same shape; the status
// passed is hipSuccess / CUDA_SUCCESS (0) in both.
hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void* userData, unsigned int flags) {
  return device_api([&] {
    if (callback == nullptr || flags != 0) return hipErrorInvalidValue;
    return to_hip(cuStreamAddCallback(cu(stream), reinterpret_cast<CUstreamCallback>(callback), userData, 0));
  });
}

// ---- events

hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags) {
  return device_api([&] {
    if (event == nullptr) return hipErrorInvalidValue;
    CUevent created = nullptr;
    const unsigned known = hipEventBlockingSync | hipEventDisableTiming | hipEventInterprocess;
    if ((flags & ~known) != 0) return hipErrorInvalidValue;
    if (CUresult r = cuEventCreate(&created, flags); r != CUDA_SUCCESS) return to_hip(r);
    *event = reinterpret_cast<hipEvent_t>(created);
    return hipSuccess;
  });
}
hipError_t hipEventCreate(hipEvent_t* event) { return hipEventCreateWithFlags(event, hipEventDefault); }

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  return device_api([&] { return to_hip(cuEventRecord(cu(event), cu(stream))); });
}

hipError_t hipEventDestroy(hipEvent_t event) {
  return device_api([&] {
    if (event == nullptr) return hipErrorInvalidResourceHandle;
    return to_hip(cuEventDestroy(cu(event)));
  });
}

hipError_t hipEventSynchronize(hipEvent_t event) {
  return device_api([&] { return to_hip(cuEventSynchronize(cu(event))); });
}

hipError_t hipEventQuery(hipEvent_t event) { return device_api([&] { return to_hip(cuEventQuery(cu(event))); }); }

hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  return device_api([&] {
    if (ms == nullptr) return hipErrorInvalidValue;
    return to_hip(cuEventElapsedTime(ms, cu(start), cu(stop)));
  });
}

// ---- stream capture and graphs (the subset PyTorch's ROCm build uses)

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
  return device_api(
      [&] { return to_hip(cuStreamBeginCapture(cu(stream), static_cast<CUstreamCaptureMode>(mode))); });
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* pGraph) {
  return device_api([&] { return to_hip(cuStreamEndCapture(cu(stream), reinterpret_cast<CUgraph*>(pGraph))); });
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus* pCaptureStatus) {
  return device_api([&] {
    return to_hip(cuStreamIsCapturing(cu(stream), reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus)));
  });
}

hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus* pCaptureStatus,
                                   unsigned long long* pId) {
  return device_api([&] {
    cuuint64_t id = 0;
    const CUresult r = cuStreamGetCaptureInfo(cu(stream), reinterpret_cast<CUstreamCaptureStatus*>(pCaptureStatus),
                                              &id, nullptr, nullptr, nullptr, nullptr);
    if (r == CUDA_SUCCESS && pId != nullptr) *pId = id;
    return to_hip(r);
  });
}

hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode* mode) {
  return device_api(
      [&] { return to_hip(cuThreadExchangeStreamCaptureMode(reinterpret_cast<CUstreamCaptureMode*>(mode))); });
}

hipError_t hipGraphCreate(hipGraph_t* pGraph, unsigned int flags) {
  return device_api([&] { return to_hip(cuGraphCreate(reinterpret_cast<CUgraph*>(pGraph), flags)); });
}

hipError_t hipGraphDestroy(hipGraph_t graph) {
  return device_api([&] { return to_hip(cuGraphDestroy(reinterpret_cast<CUgraph>(graph))); });
}

hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* numNodes) {
  return device_api([&] {
    return to_hip(cuGraphGetNodes(reinterpret_cast<CUgraph>(graph), reinterpret_cast<CUgraphNode*>(nodes), numNodes));
  });
}

hipError_t hipGraphInstantiate(hipGraphExec_t* pGraphExec, hipGraph_t graph, hipGraphNode_t* pErrorNode,
                               char* pLogBuffer, size_t bufferSize) {
  return device_api([&] {
    if (pErrorNode != nullptr) *pErrorNode = nullptr;
    if (pLogBuffer != nullptr && bufferSize > 0) pLogBuffer[0] = '\0';
    return to_hip(cuGraphInstantiate(reinterpret_cast<CUgraphExec*>(pGraphExec), reinterpret_cast<CUgraph>(graph), 0));
  });
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* pGraphExec, hipGraph_t graph, unsigned long long flags) {
  return device_api([&] {
    return to_hip(
        cuGraphInstantiate(reinterpret_cast<CUgraphExec*>(pGraphExec), reinterpret_cast<CUgraph>(graph), flags));
  });
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream) {
  return device_api([&] { return to_hip(cuGraphLaunch(reinterpret_cast<CUgraphExec>(graphExec), cu(stream))); });
}

hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec) {
  return device_api([&] { return to_hip(cuGraphExecDestroy(reinterpret_cast<CUgraphExec>(graphExec))); });
}

}  // extern "C"
