// Stream capture and graph launches, through the driver as the real runtime
// does: cudaStreamBeginCapture/EndCapture, the capture queries,
// cudaThreadExchangeStreamCaptureMode, cudaGraphInstantiate[WithFlags],
// cudaGraphLaunch, cudaGraphDestroy, cudaGraphExecDestroy. The queries answer
// "not capturing" when the driver has no capture at all.
#include <cuda_runtime_api.h>

#include "context.h"
#include "driver_api.h"
#include "errors.h"
#include "per_thread_declarations.h"
#include "tools_trace.h"

using namespace simgpu_runtime;

static_assert(static_cast<int>(cudaStreamCaptureStatusNone) ==
              static_cast<int>(CU_STREAM_CAPTURE_STATUS_NONE));
static_assert(static_cast<int>(cudaStreamCaptureModeRelaxed) ==
              static_cast<int>(CU_STREAM_CAPTURE_MODE_RELAXED));

namespace {

cudaError_t is_capturing(DefaultStream mode, cudaStream_t stream, cudaStreamCaptureStatus* status) {
  if (status == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(mode, [&](const DriverApi& api) {
    if (driver_lacks(reinterpret_cast<const void*>(api.cuStreamIsCapturing))) {
      *status = cudaStreamCaptureStatusNone;
      return CUDA_SUCCESS;
    }
    CUstreamCaptureStatus driver_status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult result = api.cuStreamIsCapturing(stream, &driver_status);
    if (result == CUDA_SUCCESS) *status = static_cast<cudaStreamCaptureStatus>(driver_status);
    return result;
  });
}

cudaError_t capture_info(DefaultStream mode, cudaStream_t stream, cudaStreamCaptureStatus* status,
                         unsigned long long* id, cudaGraph_t* graph,
                         const cudaGraphNode_t** dependencies, const cudaGraphEdgeData** edge_data,
                         size_t* dependency_count) {
  if (status == nullptr) return finish(cudaErrorInvalidValue);
  return with_context(mode, [&](const DriverApi& api) {
    if (driver_lacks(reinterpret_cast<const void*>(api.cuStreamGetCaptureInfo))) {
      *status = cudaStreamCaptureStatusNone;
      if (id != nullptr) *id = 0;
      if (graph != nullptr) *graph = nullptr;
      if (dependencies != nullptr) *dependencies = nullptr;
      if (edge_data != nullptr) *edge_data = nullptr;
      if (dependency_count != nullptr) *dependency_count = 0;
      return CUDA_SUCCESS;
    }
    CUstreamCaptureStatus driver_status = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t driver_id = 0;
    CUresult result = api.cuStreamGetCaptureInfo(stream, &driver_status, &driver_id, graph,
                                                 reinterpret_cast<const CUgraphNode**>(dependencies),
                                                 reinterpret_cast<const CUgraphEdgeData**>(edge_data),
                                                 dependency_count);
    if (result == CUDA_SUCCESS) {
      *status = static_cast<cudaStreamCaptureStatus>(driver_status);
      if (id != nullptr) *id = driver_id;
    }
    return result;
  });
}

cudaError_t begin_capture(DefaultStream mode, cudaStream_t stream, cudaStreamCaptureMode capture_mode) {
  return with_context(mode, [&](const DriverApi& api) {
    return api.cuStreamBeginCapture(stream, static_cast<CUstreamCaptureMode>(capture_mode));
  });
}

cudaError_t end_capture(DefaultStream mode, cudaStream_t stream, cudaGraph_t* graph) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuStreamEndCapture(stream, graph); });
}

cudaError_t graph_launch(DefaultStream mode, cudaGraphExec_t exec, cudaStream_t stream) {
  return with_context(mode, [&](const DriverApi& api) { return api.cuGraphLaunch(exec, stream); });
}

cudaError_t instantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long flags) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuGraphInstantiateWithFlags(exec, graph, flags); });
}

}  // namespace

extern "C" {

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  return traced("cudaStreamBeginCapture", [&] { return begin_capture(DefaultStream::legacy, stream, mode); });
}
cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  return traced("cudaStreamBeginCapture_ptsz", [&] { return begin_capture(DefaultStream::per_thread, stream, mode); });
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  return traced("cudaStreamEndCapture", [&] { return end_capture(DefaultStream::legacy, stream, pGraph); });
}
cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t* pGraph) {
  return traced("cudaStreamEndCapture_ptsz", [&] { return end_capture(DefaultStream::per_thread, stream, pGraph); });
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return traced("cudaGraphInstantiate", [&] { return instantiate(pGraphExec, graph, flags); });
}
cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags) {
  return traced("cudaGraphInstantiateWithFlags", [&] { return instantiate(pGraphExec, graph, flags); });
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return traced("cudaGraphLaunch", [&] { return graph_launch(DefaultStream::legacy, graphExec, stream); });
}
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream) {
  return traced("cudaGraphLaunch_ptsz", [&] { return graph_launch(DefaultStream::per_thread, graphExec, stream); });
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) { return api.cuGraphDestroy(graph); });
}
cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
  return with_context(DefaultStream::legacy,
                      [&](const DriverApi& api) { return api.cuGraphGetNodes(graph, nodes, numNodes); });
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  return with_context(DefaultStream::legacy, [&](const DriverApi& api) { return api.cuGraphExecDestroy(graphExec); });
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                  enum cudaStreamCaptureStatus* pCaptureStatus) {
  return traced("cudaStreamIsCapturing", [&] { return is_capturing(DefaultStream::legacy, stream, pCaptureStatus); });
}
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                       enum cudaStreamCaptureStatus* pCaptureStatus) {
  return traced("cudaStreamIsCapturing_ptsz", [&] { return is_capturing(DefaultStream::per_thread, stream, pCaptureStatus); });
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                     enum cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out,
                                     size_t* numDependencies_out) {
  return traced("cudaStreamGetCaptureInfo", [&] { return capture_info(DefaultStream::legacy, stream, captureStatus_out, id_out, graph_out,
                      dependencies_out, edgeData_out, numDependencies_out); });
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                          enum cudaStreamCaptureStatus* captureStatus_out,
                                          unsigned long long* id_out, cudaGraph_t* graph_out,
                                          const cudaGraphNode_t** dependencies_out,
                                          const cudaGraphEdgeData** edgeData_out,
                                          size_t* numDependencies_out) {
  return traced("cudaStreamGetCaptureInfo_ptsz", [&] { return capture_info(DefaultStream::per_thread, stream, captureStatus_out, id_out, graph_out,
                      dependencies_out, edgeData_out, numDependencies_out); });
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return finish(cudaErrorInvalidValue);
  const DriverApi* api = nullptr;
  if (cudaError_t error = enter(DefaultStream::legacy, &api)) return finish(error);
  if (driver_lacks(reinterpret_cast<const void*>(api->cuThreadExchangeStreamCaptureMode))) {
    // Kept here instead: the mode only matters while capturing.
    thread_local cudaStreamCaptureMode thread_mode = cudaStreamCaptureModeGlobal;
    cudaStreamCaptureMode previous = thread_mode;
    thread_mode = *mode;
    *mode = previous;
    return cudaSuccess;
  }
  return finish(
      api->cuThreadExchangeStreamCaptureMode(reinterpret_cast<CUstreamCaptureMode*>(mode)));
}

}  // extern "C"
