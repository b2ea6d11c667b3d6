// Stream capture, as far as the shim must know it to never disturb one.
//
// While a stream captures, work submitted to it becomes graph nodes instead
// of running, and "potentially unsafe" calls (synchronization, queries of
// events and streams, ...) made by a thread whose capture mode is not
// relaxed are refused and invalidate the capture: every global-mode capture
// in the process when the caller is in global mode, the caller's own
// captures otherwise (cuda.h, CUstreamCaptureMode). Two things in the shim
// could trip that, and neither may:
//
//  1. Timing events recorded into a capturing stream would become part of
//     the graph (and could never be queried). The hooks ask
//     stream_capture_status() before the start event; it costs one relaxed
//     load while no capture is open in the process (the capture hooks count
//     open captures: begin counts before the real call, so a thread that
//     sees none cannot be submitting to a stream that captures), and one
//     cuStreamIsCapturing (a query the documentation allows during capture)
//     while one is.
//  2. The shim's own unsafe calls: the writer thread's cuEventQuery and
//     cuEventElapsedTime, the clock anchors' cuEventSynchronize. The writer
//     thread puts itself in relaxed mode before its first driver call
//     (relax_this_thread), which is exactly what the mode is for; a cold
//     path on a program thread brackets its calls with RelaxedCaptureScope,
//     which sets the thread's mode to relaxed and restores the program's.
//     Neither touches the hot path.
//
// Calls that necessarily conflict with a capture (querying an event recorded
// inside one) stay refused in relaxed mode: the shim never makes them,
// because it never records its events into a capturing stream (1).
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>

namespace proflaunch::cuda {

extern std::atomic<int32_t> g_open_captures;

// Whether any capture may be open in the process: the hot path's test.
inline bool captures_may_be_open() noexcept { return g_open_captures.load(std::memory_order_relaxed) > 0; }

enum class CaptureStatus : uint8_t {
  kNone,       // not capturing: work runs (and is timed)
  kCapturing,  // capturing (or invalidated): work does not run, no event may go in
  kUnknown,    // the driver would not say (e.g. the legacy stream while a blocking stream captures): treat as capturing
};

// `stream` as the work really runs on it (effective_stream()).
CaptureStatus stream_capture_status(CUstream stream) noexcept;
inline bool stream_may_be_capturing(CUstream stream) noexcept {
  return captures_may_be_open() && stream_capture_status(stream) != CaptureStatus::kNone;
}

// The capture hooks: a capture may begin (before the real call), did not
// begin (it failed), ended.
void note_capture_begin() noexcept;
void note_capture_not_begun() noexcept;
void note_capture_ended() noexcept;

struct CaptureInfo {
  bool active = false;  // CU_STREAM_CAPTURE_STATUS_ACTIVE or _INVALIDATED
  uint64_t id = 0;
  CUgraph graph = nullptr;
  CUgraphNode last_node = nullptr;  // the one node the capture depends on now, else null
};
// cuStreamGetCaptureInfo (v3, else v2). Right after a captured call, the
// capture's dependencies are exactly the node that call became.
CaptureInfo capture_info(CUstream stream) noexcept;

// Writes a CapturedNode record: the call `correlation_id` became the node
// `stream`'s capture now depends on. On the calling thread, right after the
// call's record (and its stack).
void record_captured_node(uint64_t correlation_id, CUstream stream) noexcept;

// Puts the calling thread in relaxed capture mode for good (the writer
// thread, before its first driver call). Cheap after the first call.
void relax_this_thread() noexcept;

// The calling thread's capture mode is relaxed while this lives, and is the
// program's again afterwards. With `relax` false it does nothing (a caller
// that knows no capture can be open).
class RelaxedCaptureScope {
 public:
  RelaxedCaptureScope() noexcept : RelaxedCaptureScope(true) {}
  explicit RelaxedCaptureScope(bool relax) noexcept;
  ~RelaxedCaptureScope();
  RelaxedCaptureScope(const RelaxedCaptureScope&) = delete;
  RelaxedCaptureScope& operator=(const RelaxedCaptureScope&) = delete;

 private:
  CUstreamCaptureMode previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool exchanged_ = false;
};

}  // namespace proflaunch::cuda
