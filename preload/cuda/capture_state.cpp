#include "preload/cuda/capture_state.h"

#include "preload/cuda/driver_services.h"
#include "preload/record/emit.h"

namespace proflaunch::cuda {

std::atomic<int32_t> g_open_captures{0};

namespace {
__thread __attribute__((tls_model("initial-exec"))) bool tls_relaxed_for_good = false;
}  // namespace

CaptureStatus stream_capture_status(CUstream stream) noexcept {
  const DriverServices& driver = driver_services();
  if (driver.stream_is_capturing == nullptr) return CaptureStatus::kUnknown;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (driver.stream_is_capturing(stream, &status) != CUDA_SUCCESS) return CaptureStatus::kUnknown;
  return status == CU_STREAM_CAPTURE_STATUS_NONE ? CaptureStatus::kNone : CaptureStatus::kCapturing;
}

void note_capture_begin() noexcept { g_open_captures.fetch_add(1, std::memory_order_acq_rel); }

void note_capture_not_begun() noexcept { g_open_captures.fetch_sub(1, std::memory_order_acq_rel); }

void note_capture_ended() noexcept {
  // Never below zero: a capture the shim did not see begin (none should
  // exist) must not make a later one look closed.
  int32_t open = g_open_captures.load(std::memory_order_acquire);
  while (open > 0 && !g_open_captures.compare_exchange_weak(open, open - 1, std::memory_order_acq_rel)) {
  }
}

CaptureInfo capture_info(CUstream stream) noexcept {
  const DriverServices& driver = driver_services();
  CaptureInfo info;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  cuuint64_t id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* dependencies = nullptr;
  size_t count = 0;
  CUresult result = CUDA_ERROR_NOT_SUPPORTED;
  if (driver.stream_get_capture_info_v3 != nullptr) {
    const CUgraphEdgeData* edges = nullptr;
    result = driver.stream_get_capture_info_v3(stream, &status, &id, &graph, &dependencies, &edges, &count);
  }
  if (result != CUDA_SUCCESS && driver.stream_get_capture_info_v2 != nullptr)
    result = driver.stream_get_capture_info_v2(stream, &status, &id, &graph, &dependencies, &count);
  if (result != CUDA_SUCCESS) return info;
  info.active = status != CU_STREAM_CAPTURE_STATUS_NONE;
  if (!info.active) return info;
  info.id = id;
  info.graph = graph;
  if (count == 1 && dependencies != nullptr) info.last_node = dependencies[0];
  return info;
}

void record_captured_node(uint64_t correlation_id, CUstream stream) noexcept {
  const CaptureInfo info = capture_info(stream);
  if (auto* record = emit<format::CapturedNodeRecord>()) {
    record->correlation_id = correlation_id;
    record->capture_id = info.id;
    record->graph = reinterpret_cast<uint64_t>(info.graph);
    record->node = reinterpret_cast<uint64_t>(info.last_node);
    commit();
  }
}

void relax_this_thread() noexcept {
  if (tls_relaxed_for_good) return;
  const DriverServices& driver = driver_services();
  if (driver.thread_exchange_stream_capture_mode == nullptr) return;  // no driver yet, or one without capture
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
  if (driver.thread_exchange_stream_capture_mode(&mode) == CUDA_SUCCESS) tls_relaxed_for_good = true;
}

RelaxedCaptureScope::RelaxedCaptureScope(bool relax) noexcept {
  if (!relax || tls_relaxed_for_good) return;
  const DriverServices& driver = driver_services();
  if (driver.thread_exchange_stream_capture_mode == nullptr) return;
  previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  exchanged_ = driver.thread_exchange_stream_capture_mode(&previous_) == CUDA_SUCCESS;
}

RelaxedCaptureScope::~RelaxedCaptureScope() {
  if (!exchanged_) return;
  CUstreamCaptureMode restore = previous_;
  driver_services().thread_exchange_stream_capture_mode(&restore);
}

}  // namespace proflaunch::cuda
