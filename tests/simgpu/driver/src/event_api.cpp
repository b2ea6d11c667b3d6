#include "api_guard.h"
#include "capture.h"
#include "context.h"
#include "driver_state.h"
#include "event.h"
#include "mempool.h"

using namespace simgpu;

namespace {

CompletionRef recorded_completion(CUevent_st* event) {
  std::lock_guard lock(event->mutex);
  return event->recorded;
}

CUresult record_event(CUevent hEvent, CUstream hStream, unsigned flags, NullStream null_means) {
  if (!hEvent || !state().events.contains(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  if (flags & ~unsigned(CU_EVENT_RECORD_EXTERNAL)) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_capture_submit(stream, false); result != CUDA_SUCCESS) return result;
  // The marker's completion replaces the event's state at submission time, as
  // cuEventRecord's later queries and waits refer to the newest record.
  std::lock_guard lock(hEvent->mutex);
  hEvent->recorded = submit(stream, StreamOperation{});
  return CUDA_SUCCESS;
}

CUresult elapsed_time(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  if (!pMilliseconds) return CUDA_ERROR_INVALID_VALUE;
  if (!hStart || !hEnd || !state().events.contains(hStart) || !state().events.contains(hEnd)) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING) return CUDA_ERROR_INVALID_HANDLE;
  CompletionRef start = recorded_completion(hStart);
  CompletionRef end = recorded_completion(hEnd);
  if (!start || !end) return CUDA_ERROR_INVALID_HANDLE;
  if (!start->is_done() || !end->is_done()) return CUDA_ERROR_NOT_READY;
  // The device's timer, not the host's clock (SIMGPU_EVENT_CLOCK_PPM).
  const double rate = 1.0 + double(state().config.event_clock_ppm) * 1e-6;
  *pMilliseconds = float(double(end->end_ns - start->end_ns) * rate / 1e6);
  return CUDA_SUCCESS;
}

CUresult destroy_event(CUevent hEvent) {
  if (!hEvent || !state().events.erase(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
  // Pending work holds the completion, not the event, so freeing now is safe.
  delete hEvent;
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return api_call([&] {
    constexpr unsigned kValid = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~kValid)) return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return CUDA_ERROR_INVALID_VALUE;
    CUctx_st* context = nullptr;
    if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
    auto* event = new CUevent_st;
    event->context = context;
    event->flags = Flags;
    state().events.insert(event);
    *phEvent = event;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
  return api_call([&] { return record_event(hEvent, hStream, 0, NullStream::kLegacy); });
}
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return api_call([&] { return record_event(hEvent, hStream, 0, NullStream::kPerThread); });
}
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return api_call([&] { return record_event(hEvent, hStream, flags, NullStream::kLegacy); });
}
CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return api_call([&] { return record_event(hEvent, hStream, flags, NullStream::kPerThread); });
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent) {
  return api_call([&] {
    if (!hEvent || !state().events.contains(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
    CompletionRef completion = recorded_completion(hEvent);
    if (CUresult result = check_event_of_capture(completion); result != CUDA_SUCCESS) return result;
    // A query is potentially unsafe during a capture (capture.h).
    if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
    return !completion || completion->is_done() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
  return api_call([&] {
    if (!hEvent || !state().events.contains(hEvent)) return CUDA_ERROR_INVALID_HANDLE;
    CompletionRef recorded = recorded_completion(hEvent);
    if (CUresult result = check_event_of_capture(recorded); result != CUDA_SUCCESS) return result;
    if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
    if (recorded) recorded->wait();
    trim_pools_after_synchronize();
    return CUDA_SUCCESS;
  });
}

// The simulator gives the CUDA 2.0 and 12.8 ABI variants the same behaviour.
CUresult CUDAAPI cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return api_call([&] { return elapsed_time(pMilliseconds, hStart, hEnd); });
}
CUresult CUDAAPI cuEventElapsedTime(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
  return api_call([&] { return destroy_event(hEvent); });
}
CUresult CUDAAPI cuEventDestroy(CUevent hEvent) { return cuEventDestroy_v2(hEvent); }

}  // extern "C"
