// Stream capture and CUDA graphs: capture begin and end (StreamCapture; the
// open-capture count that keeps timing events out of capturing streams,
// capture_state.h), instantiation (every node as a GraphNode, then
// GraphExec), the executable graph's update, upload and destruction
// (GraphExec), and launches (GraphLaunch, timed as one unit on their stream).
// Work submitted to a capturing stream is recorded by its own row, flagged
// captured (stream_operation.h).
#pragma once

#include "preload/cuda/capture_state.h"
#include "preload/cuda/current_context.h"
#include "preload/cuda/rows/cuda_vendor.h"
#include "preload/cuda/rows/row_support.h"
#include "preload/cuda/stream_operation.h"
#include "preload/stacks/stacks.h"

namespace proflaunch::cuda {

// Writes a GraphNode record for every node of `graph` (child graphs'
// included) for the instantiation `exec`; returns how many. Cold.
uint32_t record_graph_nodes(CUgraph graph, CUgraphExec exec) noexcept;

struct CaptureRow {
  format::CaptureAction action;
  CUstream stream;
  uint8_t mode = format::kCaptureModeUnknown;
  CUgraph into = nullptr;           // begin: cuStreamBeginCaptureToGraph's graph
  CUgraph* graph_out = nullptr;     // end: where the graph is written

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    const CaptureRow row = describe();
    const CUstream runs_on = effective_stream(row.stream, Hook::per_thread);
    const bool begin = row.action == format::CaptureAction::kBegin;
    // Counted before the real call: from the moment this capture can exist,
    // every hook asks before it records a timing event (capture_state.h).
    if (begin) note_capture_begin();
    const CaptureInfo before = begin ? CaptureInfo{} : capture_info(runs_on);
    const bool recorded = guard.outermost() && cuda_domain_recording();
    CUcontext context = nullptr;
    const int device = recorded ? current_device(&context) : -1;
    DriverCall call(Hook::api, Operation::kCapture, variant_flags(Hook::per_thread, false));
    const CUresult result = call_real();
    call.returned();
    CaptureInfo after;
    if (begin) {
      if (result != CUDA_SUCCESS) note_capture_not_begun();
      else if (recorded) after = capture_info(runs_on);
    } else if (before.active && !capture_info(runs_on).active) {
      note_capture_ended();
    }
    if (!recorded) return result;
    if (auto* record = emit<format::StreamCaptureRecord>()) {
      call.finish(record->span, result);
      record->device = device;
      record->stream = stream_handle(row.stream, Hook::per_thread);
      record->context = reinterpret_cast<uint64_t>(context);
      record->capture_id = begin ? after.id : before.id;
      if (begin) record->graph = reinterpret_cast<uint64_t>(row.into);
      else if (result == CUDA_SUCCESS && row.graph_out != nullptr) record->graph = reinterpret_cast<uint64_t>(*row.graph_out);
      record->action = static_cast<uint8_t>(row.action);
      record->mode = row.mode;
      commit();
    }
    return result;
  }
};

struct GraphExecRow {
  format::GraphExecAction action;
  CUgraphExec* exec_out = nullptr;  // instantiate
  CUgraphExec exec = nullptr;
  CUgraph graph = nullptr;
  CUstream stream = nullptr;  // upload
  bool has_stream = false;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !cuda_domain_recording()) return call_real();
    GraphExecRow row = describe();
    CUcontext context = nullptr;
    const int device = current_device(&context);
    // The backend must be listening while the driver clones the nodes.
    if (row.action == format::GraphExecAction::kInstantiate) gpu_timing().before_graph_instantiate();
    DriverCall call(Hook::api, Operation::kGraph, variant_flags(Hook::per_thread, false));
    const CUresult result = call_real();
    call.returned();
    uint32_t nodes = 0;
    if (row.action == format::GraphExecAction::kInstantiate) {
      row.exec = result == CUDA_SUCCESS && row.exec_out != nullptr ? *row.exec_out : nullptr;
      // The nodes as instantiated, before the record that names them.
      if (row.exec != nullptr && row.graph != nullptr) nodes = record_graph_nodes(row.graph, row.exec);
    }
    if (auto* record = emit<format::GraphExecRecord>()) {
      call.finish(record->span, result);
      record->device = device;
      record->graph_exec = reinterpret_cast<uint64_t>(row.exec);
      record->graph = reinterpret_cast<uint64_t>(row.graph);
      record->stream = row.has_stream ? stream_handle(row.stream, Hook::per_thread) : 0;
      record->context = reinterpret_cast<uint64_t>(context);
      record->node_count = nodes;
      record->action = static_cast<uint8_t>(row.action);
      commit();
      if (row.action == format::GraphExecAction::kInstantiate)
        stacks::attach_stacks(call.correlation(), format::StackPoint::kLaunch);
    }
    return result;
  }
};

// cuGraphLaunch (and hipGraphLaunch: GraphLaunchRowOf<HipVendor>): GPU work
// on a stream like a kernel launch, timed as one unit (events around the
// whole graph); captured like any work when its stream captures (a graph
// launched into a capture becomes a child graph).
template <typename Vendor>
struct GraphLaunchRowOf {
  uint64_t exec;
  typename Vendor::Stream stream;

  template <typename Hook, typename Describe, typename CallReal>
  static auto run(Describe&& describe, CallReal&& call_real) {
    ReentrancyGuard guard;
    if (!guard.outermost() || !Vendor::recording()) return call_real();
    const GraphLaunchRowOf row = describe();
    typename Vendor::StreamOperation operation(Hook::api, Operation::kGraphLaunch, Hook::per_thread, /*async=*/true,
                                               Submission::kAsynchronous, row.stream);
    return submit<format::GraphLaunchRecord>(operation, call_real, format::GpuActivityKind::kGraph,
                                             [&](format::GraphLaunchRecord& record) { record.graph_exec = row.exec; });
  }
};
using GraphLaunchRow = GraphLaunchRowOf<CudaVendor>;

namespace rows {
inline CaptureRow capture_begin(CUstream stream, CUstreamCaptureMode mode) noexcept {
  return {format::CaptureAction::kBegin, stream, static_cast<uint8_t>(mode)};
}
inline CaptureRow capture_begin(CUstream stream) noexcept {  // the CUDA 10.0 ABI: no mode
  return {format::CaptureAction::kBegin, stream};
}
inline CaptureRow capture_begin_to_graph(CUstream stream, CUgraph graph, CUstreamCaptureMode mode) noexcept {
  return {format::CaptureAction::kBegin, stream, static_cast<uint8_t>(mode), graph};
}
inline CaptureRow capture_end(CUstream stream, CUgraph* graph_out) noexcept {
  return {format::CaptureAction::kEnd, stream, format::kCaptureModeUnknown, nullptr, graph_out};
}
inline GraphExecRow graph_instantiate(CUgraphExec* exec_out, CUgraph graph) noexcept {
  return {format::GraphExecAction::kInstantiate, exec_out, nullptr, graph};
}
inline GraphExecRow graph_exec_update(CUgraphExec exec, CUgraph graph) noexcept {
  return {format::GraphExecAction::kUpdate, nullptr, exec, graph};
}
inline GraphExecRow graph_upload(CUgraphExec exec, CUstream stream) noexcept {
  return {format::GraphExecAction::kUpload, nullptr, exec, nullptr, stream, true};
}
inline GraphExecRow graph_exec_destroy(CUgraphExec exec) noexcept {
  return {format::GraphExecAction::kDestroy, nullptr, exec};
}
inline GraphExecRow graph_destroy(CUgraph graph) noexcept {
  return {format::GraphExecAction::kGraphDestroy, nullptr, nullptr, graph};
}
inline GraphLaunchRow graph_launch(CUgraphExec exec, CUstream stream) noexcept {
  return {reinterpret_cast<uint64_t>(exec), stream};
}
}  // namespace rows

}  // namespace proflaunch::cuda
