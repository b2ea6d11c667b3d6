// cuStream*: creation, queries, synchronization, cross-stream waits and host
// functions. Every function taking a stream has a _ptsz twin in which a NULL
// stream means the calling thread's per-thread default stream.
#include <algorithm>

#include "api_guard.h"
#include "capture.h"
#include "context.h"
#include "driver_state.h"
#include "event.h"
#include "kernel_limits.h"
#include "mempool.h"

using namespace simgpu;

namespace {

constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;


CUresult create_stream_checked(CUstream* phStream, unsigned flags, int priority) {
  if (!phStream || (flags & ~unsigned(CU_STREAM_NON_BLOCKING))) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* context = nullptr;
  if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
  priority = std::clamp(priority, kGreatestPriority, kLeastPriority);
  *phStream = create_stream(context, StreamKind::kCreated, flags, priority);
  return CUDA_SUCCESS;
}

CUresult synchronize_stream(CUstream hStream, NullStream null_means) {
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_stream_wait_or_query(stream); result != CUDA_SUCCESS) return result;
  if (CompletionRef pending = last_submitted(stream)) pending->wait();
  trim_pools_after_synchronize();
  return CUDA_SUCCESS;
}

CUresult query_stream(CUstream hStream, NullStream null_means) {
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_stream_wait_or_query(stream); result != CUDA_SUCCESS) return result;
  CompletionRef pending = last_submitted(stream);
  return !pending || pending->is_done() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult wait_event(CUstream hStream, CUevent hEvent, unsigned flags, NullStream null_means) {
  if (flags & ~unsigned(CU_EVENT_WAIT_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  if (!hEvent || !state().events.contains(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  CompletionRef recorded;
  {
    std::lock_guard lock(hEvent->mutex);
    recorded = hEvent->recorded;
  }
  if (CUresult captured = CUDA_SUCCESS; capture_wait_event(stream, recorded, captured)) return captured;
  if (!recorded) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  StreamOperation wait;
  wait.waits.push_back(std::move(recorded));
  submit(stream, std::move(wait));
  return CUDA_SUCCESS;
}

template <class Read>
CUresult read_stream(CUstream hStream, NullStream null_means, Read&& read) {
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  read(*stream);
  return CUDA_SUCCESS;
}

CUresult launch_host_function(CUstream hStream, CUhostFn fn, void* userData, NullStream null_means) {
  if (!fn) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_capture_submit(stream, false); result != CUDA_SUCCESS) return result;
  StreamOperation op;
  op.node.type = CU_GRAPH_NODE_TYPE_HOST;
  op.node.host_fn = fn;
  op.node.user_data = userData;
  op.effect = [fn, userData] { fn(userData); };
  op.effect_time_counts = true;
  submit(stream, std::move(op));
  return CUDA_SUCCESS;
}

CUresult add_callback(CUstream hStream, CUstreamCallback callback, void* userData, unsigned flags,
                      NullStream null_means) {
  if (!callback || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_capture_submit(stream, false); result != CUDA_SUCCESS) return result;
  // cuda.h: "not supported with cuStreamBeginCapture and cuStreamEndCapture,
  // unlike cuLaunchHostFunc". Whether the real driver also invalidates the
  // capture is not documented; the simulator leaves it open.
  if (stream_captures(stream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  StreamOperation op;
  op.node.type = CU_GRAPH_NODE_TYPE_HOST;
  op.effect = [callback, hStream, userData] { callback(hStream, CUDA_SUCCESS, userData); };
  op.effect_time_counts = true;
  submit(stream, std::move(op));
  return CUDA_SUCCESS;
}

// The attributes cuda.h marks "Valid for streams"; any other is refused.
CUresult set_stream_attribute(CUstream hStream, CUstreamAttrID attribute, const CUstreamAttrValue* value,
                              NullStream null_means) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  std::lock_guard lock(stream->attribute_mutex);
  switch (attribute) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      if (!valid_access_policy_window(value->accessPolicyWindow)) return CUDA_ERROR_INVALID_VALUE;
      stream->access_policy_window = value->accessPolicyWindow;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      if (value->syncPolicy < CU_SYNC_POLICY_AUTO || value->syncPolicy > CU_SYNC_POLICY_BLOCKING_SYNC) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      stream->sync_policy = value->syncPolicy;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      stream->priority = std::clamp(value->priority, kGreatestPriority, kLeastPriority);
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      stream->mem_sync_domain_map = value->memSyncDomainMap;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      if (value->memSyncDomain != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT &&
          value->memSyncDomain != CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      stream->mem_sync_domain = value->memSyncDomain;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      stream->nvlink_util_centric = value->nvlinkUtilCentricScheduling != 0;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult get_stream_attribute(CUstream hStream, CUstreamAttrID attribute, CUstreamAttrValue* value,
                              NullStream null_means) {
  if (!value) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  std::lock_guard lock(stream->attribute_mutex);
  switch (attribute) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
      value->accessPolicyWindow = stream->access_policy_window;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
      value->syncPolicy = stream->sync_policy;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
      value->priority = stream->priority;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
      value->memSyncDomainMap = stream->mem_sync_domain_map;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
      value->memSyncDomain = stream->mem_sync_domain;
      return CUDA_SUCCESS;
    case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
      value->nvlinkUtilCentricScheduling = stream->nvlink_util_centric;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

// Copies the access policy window and the synchronization policy (cuda.h).
CUresult copy_stream_attributes(CUstream hDst, CUstream hSrc, NullStream null_means) {
  CUstream_st* dst = nullptr;
  CUstream_st* src = nullptr;
  if (CUresult result = resolve_stream(hDst, null_means, dst); result != CUDA_SUCCESS) return result;
  if (CUresult result = resolve_stream(hSrc, null_means, src); result != CUDA_SUCCESS) return result;
  if (dst == src) return CUDA_SUCCESS;
  CUaccessPolicyWindow window;
  CUsynchronizationPolicy policy;
  {
    std::lock_guard lock(src->attribute_mutex);
    window = src->access_policy_window;
    policy = src->sync_policy;
  }
  std::lock_guard lock(dst->attribute_mutex);
  dst->access_policy_window = window;
  dst->sync_policy = policy;
  return CUDA_SUCCESS;
}

// Capture queries (capture.h): the stream's capture, if any. The legacy
// stream cannot capture; asking about it while a blocking stream of its
// context captures is CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (cuda.h).
CUresult capture_info(CUstream hStream, CUstreamCaptureStatus* status, cuuint64_t* id, CUgraph* graph,
                      const CUgraphNode** dependencies, const CUgraphEdgeData** edge_data, size_t* dependency_count,
                      NullStream null_means) {
  if (!status) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  std::lock_guard lock(capture_mutex());
  if (stream->kind == StreamKind::kLegacy && blocking_stream_captures_locked(stream->context))
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  const std::shared_ptr<Capture>& capture = stream->capture;
  *status = !capture ? CU_STREAM_CAPTURE_STATUS_NONE
            : capture->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                   : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  if (id) *id = capture ? capture->id : 0;
  if (graph) *graph = capture ? capture->graph : nullptr;
  // The dependency list lives in the stream until its next capture call.
  if (dependencies) *dependencies = capture && !stream->capture_dependencies.empty() ? stream->capture_dependencies.data() : nullptr;
  if (edge_data) *edge_data = nullptr;
  if (dependency_count) *dependency_count = capture ? stream->capture_dependencies.size() : 0;
  return CUDA_SUCCESS;
}

CUresult capture_status(CUstream hStream, CUstreamCaptureStatus* status, NullStream null_means) {
  return capture_info(hStream, status, nullptr, nullptr, nullptr, nullptr, nullptr, null_means);
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return api_call([&] { return create_stream_checked(phStream, Flags, 0); });
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  return api_call([&] { return create_stream_checked(phStream, flags, priority); });
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
  return api_call([&] {
    if (!hStream || !state().streams.contains(hStream)) return CUDA_ERROR_INVALID_HANDLE;
    destroy_stream(hStream);
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuStreamDestroy(CUstream hStream) { return cuStreamDestroy_v2(hStream); }

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
  return api_call([&] { return synchronize_stream(hStream, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) {
  return api_call([&] { return synchronize_stream(hStream, NullStream::kPerThread); });
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) {
  return api_call([&] { return query_stream(hStream, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) {
  return api_call([&] { return query_stream(hStream, NullStream::kPerThread); });
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return api_call([&] { return wait_event(hStream, hEvent, Flags, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return api_call([&] { return wait_event(hStream, hEvent, Flags, NullStream::kPerThread); });
}

#define SIMGPU_STREAM_GETTER(api, type, field_expression)                                                           \
  CUresult CUDAAPI api(CUstream hStream, type* out) {                                                               \
    return api_call([&] {                                                                                           \
      if (!out) return CUDA_ERROR_INVALID_VALUE;                                                                    \
      return read_stream(hStream, NullStream::kLegacy, [&](CUstream_st& stream) { *out = (field_expression); });    \
    });                                                                                                             \
  }                                                                                                                 \
  CUresult CUDAAPI api##_ptsz(CUstream hStream, type* out) {                                                        \
    return api_call([&] {                                                                                           \
      if (!out) return CUDA_ERROR_INVALID_VALUE;                                                                    \
      return read_stream(hStream, NullStream::kPerThread, [&](CUstream_st& stream) { *out = (field_expression); }); \
    });                                                                                                             \
  }

SIMGPU_STREAM_GETTER(cuStreamGetId, unsigned long long, stream.id)
SIMGPU_STREAM_GETTER(cuStreamGetPriority, int, stream.priority)
SIMGPU_STREAM_GETTER(cuStreamGetFlags, unsigned int, stream.flags)
SIMGPU_STREAM_GETTER(cuStreamGetCtx, CUcontext, stream.context)
SIMGPU_STREAM_GETTER(cuStreamGetDevice, CUdevice, stream.context->device->ordinal)
#undef SIMGPU_STREAM_GETTER

CUresult CUDAAPI cuStreamGetCtx_v2(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return api_call([&] {
    if (!pCtx || !pGreenCtx) return CUDA_ERROR_INVALID_VALUE;
    *pGreenCtx = nullptr;
    return read_stream(hStream, NullStream::kLegacy, [&](CUstream_st& stream) { *pCtx = stream.context; });
  });
}
CUresult CUDAAPI cuStreamGetCtx_v2_ptsz(CUstream hStream, CUcontext* pCtx, CUgreenCtx* pGreenCtx) {
  return api_call([&] {
    if (!pCtx || !pGreenCtx) return CUDA_ERROR_INVALID_VALUE;
    *pGreenCtx = nullptr;
    return read_stream(hStream, NullStream::kPerThread, [&](CUstream_st& stream) { *pCtx = stream.context; });
  });
}

CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value) {
  return api_call([&] { return set_stream_attribute(hStream, attr, value, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr, const CUstreamAttrValue* value) {
  return api_call([&] { return set_stream_attribute(hStream, attr, value, NullStream::kPerThread); });
}
CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out) {
  return api_call([&] { return get_stream_attribute(hStream, attr, value_out, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr, CUstreamAttrValue* value_out) {
  return api_call([&] { return get_stream_attribute(hStream, attr, value_out, NullStream::kPerThread); });
}
CUresult CUDAAPI cuStreamCopyAttributes(CUstream dst, CUstream src) {
  return api_call([&] { return copy_stream_attributes(dst, src, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src) {
  return api_call([&] { return copy_stream_attributes(dst, src, NullStream::kPerThread); });
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return api_call([&] { return launch_host_function(hStream, fn, userData, NullStream::kLegacy); });
}
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void* userData) {
  return api_call([&] { return launch_host_function(hStream, fn, userData, NullStream::kPerThread); });
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void* userData, unsigned int flags) {
  return api_call([&] { return add_callback(hStream, callback, userData, flags, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamAddCallback_ptsz(CUstream hStream, CUstreamCallback callback, void* userData,
                                          unsigned int flags) {
  return api_call([&] { return add_callback(hStream, callback, userData, flags, NullStream::kPerThread); });
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return api_call([&] { return capture_status(hStream, captureStatus, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return api_call([&] { return capture_status(hStream, captureStatus, NullStream::kPerThread); });
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                        cuuint64_t* id_out) {
  return api_call([&] {
    return capture_info(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr, NullStream::kLegacy);
  });
}
CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                             cuuint64_t* id_out) {
  return api_call([&] {
    return capture_info(hStream, captureStatus_out, id_out, nullptr, nullptr, nullptr, nullptr, NullStream::kPerThread);
  });
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                           cuuint64_t* id_out, CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                           size_t* numDependencies_out) {
  return api_call([&] {
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr, numDependencies_out,
                        NullStream::kLegacy);
  });
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                cuuint64_t* id_out, CUgraph* graph_out,
                                                const CUgraphNode** dependencies_out, size_t* numDependencies_out) {
  return api_call([&] {
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, nullptr, numDependencies_out,
                        NullStream::kPerThread);
  });
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                           cuuint64_t* id_out, CUgraph* graph_out, const CUgraphNode** dependencies_out,
                                           const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return api_call([&] {
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out, NullStream::kLegacy);
  });
}
CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus_out,
                                                cuuint64_t* id_out, CUgraph* graph_out,
                                                const CUgraphNode** dependencies_out,
                                                const CUgraphEdgeData** edgeData_out, size_t* numDependencies_out) {
  return api_call([&] {
    return capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                        numDependencies_out, NullStream::kPerThread);
  });
}

CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode* mode) {
  return api_call([&] {
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    std::swap(*mode, thread_capture_mode());
    return CUDA_SUCCESS;
  });
}

}  // extern "C"
