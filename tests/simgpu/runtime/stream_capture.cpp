// Stream-capture queries. Capture itself is not implemented
// (cudaStreamBeginCapture returns cudaErrorNotSupported), but libraries ask
// whether a stream is capturing around ordinary work (PyTorch's caching
// allocator, cuBLAS), so the queries answer: through the driver when it
// knows, otherwise "not capturing", which is the truth when nothing can
// begin a capture.
#include <cuda_runtime_api.h>

#include "context.h"
#include "driver_api.h"
#include "errors.h"
#include "per_thread_declarations.h"

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
  cudaError_t error = is_capturing(mode, stream, status);
  if (error != cudaSuccess) return error;
  if (*status != cudaStreamCaptureStatusNone) return finish(cudaErrorNotSupported);
  // Documented: with no capture in progress the other outputs are left
  // undefined; zero is the kind answer.
  if (id != nullptr) *id = 0;
  if (graph != nullptr) *graph = nullptr;
  if (dependencies != nullptr) *dependencies = nullptr;
  if (edge_data != nullptr) *edge_data = nullptr;
  if (dependency_count != nullptr) *dependency_count = 0;
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                  enum cudaStreamCaptureStatus* pCaptureStatus) {
  return is_capturing(DefaultStream::legacy, stream, pCaptureStatus);
}
cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream,
                                       enum cudaStreamCaptureStatus* pCaptureStatus) {
  return is_capturing(DefaultStream::per_thread, stream, pCaptureStatus);
}

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream,
                                     enum cudaStreamCaptureStatus* captureStatus_out,
                                     unsigned long long* id_out, cudaGraph_t* graph_out,
                                     const cudaGraphNode_t** dependencies_out,
                                     const cudaGraphEdgeData** edgeData_out,
                                     size_t* numDependencies_out) {
  return capture_info(DefaultStream::legacy, stream, captureStatus_out, id_out, graph_out,
                      dependencies_out, edgeData_out, numDependencies_out);
}
cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream,
                                          enum cudaStreamCaptureStatus* captureStatus_out,
                                          unsigned long long* id_out, cudaGraph_t* graph_out,
                                          const cudaGraphNode_t** dependencies_out,
                                          const cudaGraphEdgeData** edgeData_out,
                                          size_t* numDependencies_out) {
  return capture_info(DefaultStream::per_thread, stream, captureStatus_out, id_out, graph_out,
                      dependencies_out, edgeData_out, numDependencies_out);
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
