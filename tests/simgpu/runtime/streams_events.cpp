// Streams, events and host callbacks. cudaStream_t and cudaEvent_t are the
// driver's CUstream and CUevent, and the special handles (0, cudaStreamLegacy,
// cudaStreamPerThread) mean the same to both, so handles pass through; what
// the runtime chooses is the driver variant: the legacy entry points call
// cuStreamSynchronize, the _ptsz ones cuStreamSynchronize_ptsz, where a null
// stream is the calling thread's per-thread default stream.
#include <cuda_runtime_api.h>

#include <new>

#include "context.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

static_assert(cudaStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(cudaEventDisableTiming == CU_EVENT_DISABLE_TIMING);
static_assert(cudaEventBlockingSync == CU_EVENT_BLOCKING_SYNC);
static_assert(cudaEventInterprocess == CU_EVENT_INTERPROCESS);

namespace {

cudaError_t stream_synchronize(DefaultStream mode, cudaStream_t stream) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuStreamSynchronize(stream); });
}

cudaError_t stream_query(DefaultStream mode, cudaStream_t stream) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuStreamQuery(stream); });
}

cudaError_t stream_wait_event(DefaultStream mode, cudaStream_t stream, cudaEvent_t event,
                              unsigned int flags) {
  return with_context(
      mode, [&](const DriverApi& api) { return api.cuStreamWaitEvent(stream, event, flags); });
}

cudaError_t stream_get_priority(DefaultStream mode, cudaStream_t stream, int* priority) {
  return with_context(
      mode, [&](const DriverApi& api) { return api.cuStreamGetPriority(stream, priority); });
}

cudaError_t stream_get_flags(DefaultStream mode, cudaStream_t stream, unsigned int* flags) {
  return with_context(mode,
                      [&](const DriverApi& api) { return api.cuStreamGetFlags(stream, flags); });
}

cudaError_t stream_get_id(DefaultStream mode, cudaStream_t stream, unsigned long long* id) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuStreamGetId(stream, id); });
}

cudaError_t stream_get_device(DefaultStream mode, cudaStream_t stream, int* device) {
  return with_context(mode,
                      [&](const DriverApi& api) { return api.cuStreamGetDevice(stream, device); });
}

// cudaStreamAttrValue is the runtime's name for the driver's launch
// attribute value union: the same members at the same offsets.
static_assert(sizeof(cudaStreamAttrValue) == sizeof(CUstreamAttrValue));
static_assert(sizeof(cudaAccessPolicyWindow) == sizeof(CUaccessPolicyWindow));
static_assert(static_cast<int>(cudaLaunchAttributeAccessPolicyWindow) ==
              static_cast<int>(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW));
static_assert(static_cast<int>(cudaLaunchAttributePriority) == static_cast<int>(CU_LAUNCH_ATTRIBUTE_PRIORITY));
static_assert(static_cast<int>(cudaAccessPropertyPersisting) == static_cast<int>(CU_ACCESS_PROPERTY_PERSISTING));

cudaError_t stream_set_attribute(DefaultStream mode, cudaStream_t stream, cudaStreamAttrID attr,
                                 const cudaStreamAttrValue* value) {
  return with_context(mode, [&](const DriverApi& api) {
    return api.cuStreamSetAttribute(stream, static_cast<CUstreamAttrID>(attr),
                                    reinterpret_cast<const CUstreamAttrValue*>(value));
  });
}

cudaError_t stream_get_attribute(DefaultStream mode, cudaStream_t stream, cudaStreamAttrID attr,
                                 cudaStreamAttrValue* value) {
  return with_context(mode, [&](const DriverApi& api) {
    return api.cuStreamGetAttribute(stream, static_cast<CUstreamAttrID>(attr),
                                    reinterpret_cast<CUstreamAttrValue*>(value));
  });
}

cudaError_t stream_copy_attributes(DefaultStream mode, cudaStream_t dst, cudaStream_t src) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuStreamCopyAttributes(dst, src); });
}

cudaError_t event_record(DefaultStream mode, cudaEvent_t event, cudaStream_t stream) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuEventRecord(event, stream); });
}

cudaError_t event_record_with_flags(DefaultStream mode, cudaEvent_t event, cudaStream_t stream,
                                    unsigned int flags) {
  return with_context(
      mode, [&](const DriverApi& api) { return api.cuEventRecordWithFlags(event, stream, flags); });
}

cudaError_t launch_host_func(DefaultStream mode, cudaStream_t stream, cudaHostFn_t fn,
                             void* user_data) {
  return with_context(
      mode, [&](const DriverApi& api) { return api.cuLaunchHostFunc(stream, fn, user_data); });
}

// cudaStreamCallback_t receives a cudaError_t, CUstreamCallback a CUresult:
// the trampoline translates, then frees its closure (it runs exactly once).
struct StreamCallbackClosure {
  cudaStreamCallback_t callback;
  void* user_data;
};

void CUDA_CB run_stream_callback(CUstream stream, CUresult status, void* closure_pointer) {
  auto* closure = static_cast<StreamCallbackClosure*>(closure_pointer);
  closure->callback(stream, runtime_error_from(status), closure->user_data);
  delete closure;
}

cudaError_t stream_add_callback(DefaultStream mode, cudaStream_t stream,
                                cudaStreamCallback_t callback, void* user_data,
                                unsigned int flags) {
  if (callback == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter_with_context(mode, &api)) return finish(error);
  auto* closure = new (std::nothrow) StreamCallbackClosure{callback, user_data};
  if (closure == nullptr) return finish(cudaErrorMemoryAllocation);
  CUresult result = api->cuStreamAddCallback(stream, run_stream_callback, closure, flags);
  if (result != CUDA_SUCCESS) delete closure;
  return finish(result);
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuStreamCreate(pStream, CU_STREAM_DEFAULT);
  });
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuStreamCreate(pStream, flags); });
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuStreamCreateWithPriority(pStream, flags, priority);
  });
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuStreamDestroy(stream); });
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return traced("cudaStreamSynchronize", [&] { return stream_synchronize(DefaultStream::legacy, stream); });
}
cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream) {
  return traced("cudaStreamSynchronize_ptsz", [&] { return stream_synchronize(DefaultStream::per_thread, stream); });
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  return traced("cudaStreamQuery", [&] { return stream_query(DefaultStream::legacy, stream); });
}
cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream) {
  return traced("cudaStreamQuery_ptsz", [&] { return stream_query(DefaultStream::per_thread, stream); });
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return traced("cudaStreamWaitEvent", [&] { return stream_wait_event(DefaultStream::legacy, stream, event, flags); });
}
cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return traced("cudaStreamWaitEvent_ptsz", [&] { return stream_wait_event(DefaultStream::per_thread, stream, event, flags); });
}

cudaError_t cudaStreamSetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                   const cudaStreamAttrValue* value) {
  return traced("cudaStreamSetAttribute", [&] { return stream_set_attribute(DefaultStream::legacy, hStream, attr, value); });
}
cudaError_t cudaStreamSetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
                                        const cudaStreamAttrValue* value) {
  return traced("cudaStreamSetAttribute_ptsz", [&] { return stream_set_attribute(DefaultStream::per_thread, hStream, attr, value); });
}
cudaError_t cudaStreamGetAttribute(cudaStream_t hStream, cudaStreamAttrID attr,
                                   cudaStreamAttrValue* value_out) {
  return traced("cudaStreamGetAttribute", [&] { return stream_get_attribute(DefaultStream::legacy, hStream, attr, value_out); });
}
cudaError_t cudaStreamGetAttribute_ptsz(cudaStream_t hStream, cudaStreamAttrID attr,
                                        cudaStreamAttrValue* value_out) {
  return traced("cudaStreamGetAttribute_ptsz", [&] { return stream_get_attribute(DefaultStream::per_thread, hStream, attr, value_out); });
}
cudaError_t cudaStreamCopyAttributes(cudaStream_t dst, cudaStream_t src) {
  return traced("cudaStreamCopyAttributes", [&] { return stream_copy_attributes(DefaultStream::legacy, dst, src); });
}
cudaError_t cudaStreamCopyAttributes_ptsz(cudaStream_t dst, cudaStream_t src) {
  return traced("cudaStreamCopyAttributes_ptsz", [&] { return stream_copy_attributes(DefaultStream::per_thread, dst, src); });
}

cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int* priority) {
  return traced("cudaStreamGetPriority", [&] { return stream_get_priority(DefaultStream::legacy, hStream, priority); });
}
cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int* priority) {
  return traced("cudaStreamGetPriority_ptsz", [&] { return stream_get_priority(DefaultStream::per_thread, hStream, priority); });
}

cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  return traced("cudaStreamGetFlags", [&] { return stream_get_flags(DefaultStream::legacy, hStream, flags); });
}
cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t hStream, unsigned int* flags) {
  return traced("cudaStreamGetFlags_ptsz", [&] { return stream_get_flags(DefaultStream::per_thread, hStream, flags); });
}

cudaError_t cudaStreamGetId(cudaStream_t hStream, unsigned long long* streamId) {
  return traced("cudaStreamGetId", [&] { return stream_get_id(DefaultStream::legacy, hStream, streamId); });
}
cudaError_t cudaStreamGetId_ptsz(cudaStream_t hStream, unsigned long long* streamId) {
  return traced("cudaStreamGetId_ptsz", [&] { return stream_get_id(DefaultStream::per_thread, hStream, streamId); });
}

cudaError_t cudaStreamGetDevice(cudaStream_t hStream, int* device) {
  return traced("cudaStreamGetDevice", [&] { return stream_get_device(DefaultStream::legacy, hStream, device); });
}
cudaError_t cudaStreamGetDevice_ptsz(cudaStream_t hStream, int* device) {
  return traced("cudaStreamGetDevice_ptsz", [&] { return stream_get_device(DefaultStream::per_thread, hStream, device); });
}

cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback,
                                  void* userData, unsigned int flags) {
  return traced("cudaStreamAddCallback", [&] { return stream_add_callback(DefaultStream::legacy, stream, callback, userData, flags); });
}
cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback,
                                       void* userData, unsigned int flags) {
  return traced("cudaStreamAddCallback_ptsz", [&] { return stream_add_callback(DefaultStream::per_thread, stream, callback, userData, flags); });
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return traced("cudaLaunchHostFunc", [&] { return launch_host_func(DefaultStream::legacy, stream, fn, userData); });
}
cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  return traced("cudaLaunchHostFunc_ptsz", [&] { return launch_host_func(DefaultStream::per_thread, stream, fn, userData); });
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) {
    return api.cuEventCreate(event, CU_EVENT_DEFAULT);
  });
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuEventCreate(event, flags); });
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return traced("cudaEventRecord", [&] { return event_record(DefaultStream::legacy, event, stream); });
}
cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return traced("cudaEventRecord_ptsz", [&] { return event_record(DefaultStream::per_thread, event, stream); });
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags) {
  return traced("cudaEventRecordWithFlags", [&] { return event_record_with_flags(DefaultStream::legacy, event, stream, flags); });
}
cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
                                          unsigned int flags) {
  return traced("cudaEventRecordWithFlags_ptsz", [&] { return event_record_with_flags(DefaultStream::per_thread, event, stream, flags); });
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuEventQuery(event); });
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuEventSynchronize(event); });
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuEventElapsedTime(ms, start, end); });
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuEventDestroy(event); });
}

}  // extern "C"
