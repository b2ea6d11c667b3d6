// Stream capture and graphs (tests/simgpu/README.md, "Stream capture and
// graphs", says which documented rule each piece follows).
//
// A capturing stream turns what is submitted to it into graph nodes instead
// of running it (submit() asks capture_submission() first). An event
// recorded on a capturing stream is a CaptureMark: the capture and the nodes
// the stream depended on then; a stream that waits for it joins the capture.
// "Potentially unsafe" calls (synchronizations, queries, synchronous copies,
// cuMemAlloc/cuMemFree) ask check_unsafe_call(): in global mode a thread is
// refused while any global-mode capture is open in the process or one of
// its own non-relaxed captures is, and the capture it conflicts with is
// invalidated; thread-local mode only looks at the thread's own captures;
// relaxed mode is never refused.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_api.h"
#include "stream.h"

namespace simgpu {
// Ids a tools library sees (simgpu_tools.h): unique per process, never reused.
uint32_t next_graph_tools_id();
uint64_t next_node_tools_id();
}  // namespace simgpu

struct CUgraphNode_st {
  CUgraph_st* graph = nullptr;
  uint64_t tools_id = simgpu::next_node_tools_id();
  simgpu::NodeDescription description;
  CUgraph_st* child = nullptr;  // a child-graph node's graph (owned by the node: a copy)
  std::vector<CUgraphNode_st*> dependencies;
  simgpu::StreamOperation work;  // what a launch of the graph runs for it (no waits)
  ~CUgraphNode_st();
};

struct CUgraph_st {
  uint32_t tools_id = simgpu::next_graph_tools_id();
  std::vector<std::unique_ptr<CUgraphNode_st>> nodes;  // dependencies always come first
  // Stream-ordered allocations captured into this graph: made when captured,
  // held by the graph for every launch, given back when it is destroyed.
  std::vector<CUdeviceptr> owned;
  ~CUgraph_st();
};

struct CUgraphExec_st {
  CUctx_st* context = nullptr;
  struct Node {
    simgpu::StreamOperation work;
    std::vector<size_t> dependencies;  // indices of earlier nodes
    size_t lane = 0;
    const CUgraphNode_st* origin = nullptr;  // the graph node it was made from
    CUgraphNode_st* clone = nullptr;         // what it runs as: its own id (owned by `clones`)
  };
  std::vector<Node> nodes;
  // As a real driver does, an executable graph runs clones of the graph's
  // nodes, each with its own id: a tools library learns them when they are
  // made (graph_node_cloned) and finds them in the work records.
  std::vector<std::unique_ptr<CUgraphNode_st>> clones;
  std::vector<CUstream_st*> lanes;  // the context's streams the nodes run on, so branches overlap
};

namespace simgpu {

struct Capture {
  uint64_t id = 0;
  CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  std::thread::id thread;
  CUctx_st* context = nullptr;
  CUstream_st* origin = nullptr;
  CUgraph_st* graph = nullptr;
  bool invalidated = false;
  std::vector<CUstream_st*> streams;  // the origin and every stream that joined
};

struct CaptureMark {
  std::shared_ptr<Capture> capture;
  std::vector<CUgraphNode_st*> dependencies;
};

std::mutex& capture_mutex();

// Whether `node` is a node of a live graph. Caller holds capture_mutex().
bool graph_node_known_locked(CUgraphNode node);
// Whether `node` is a node of a live executable graph (a clone). Caller
// holds capture_mutex().
bool graph_node_clone_known_locked(CUgraphNode node);

// The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
CUstreamCaptureMode& thread_capture_mode();

// submit(): when `stream` captures, `op` becomes a node (or, for a marker, a
// CaptureMark) and this returns true with the completion to hand back.
// Called with the context's submit mutex held.
bool capture_submission(CUstream_st* stream, StreamOperation& op, CompletionRef& completion);

// Before work is submitted to `stream`: refused when its capture was
// invalidated, when it is the legacy stream while a blocking stream of its
// context captures (CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: that capture is
// invalidated), or when a synchronous call would wait on a capturing stream.
CUresult check_capture_submit(CUstream_st* stream, bool synchronous);

// Whether `stream` belongs to a capture now.
bool stream_captures(CUstream_st* stream);

// A potentially unsafe call by the calling thread (see above).
CUresult check_unsafe_call();

// cuStreamSynchronize / cuStreamQuery of `stream`: unsupported (and
// invalidating) on a capturing stream, else an unsafe call.
CUresult check_stream_wait_or_query(CUstream_st* stream);

// cuStreamWaitEvent(stream, event recorded as `recorded`): joins a capture
// when the event was recorded in one. True when it handled the wait (result
// in `result`); false: an ordinary wait.
bool capture_wait_event(CUstream_st* stream, const CompletionRef& recorded, CUresult& result);

// cuEventQuery / cuEventSynchronize of an event recorded inside a capture:
// refused whatever the mode (it necessarily conflicts with the capture).
CUresult check_event_of_capture(const CompletionRef& recorded);

// Whether a blocking stream of `context` captures (capture_mutex() held).
bool blocking_stream_captures_locked(CUctx_st* context);

// cuMemAllocAsync on `stream` obtained `address`: when the stream captures,
// the allocation becomes a mem-alloc node of the graph, which owns it.
void capture_allocation(CUstream_st* stream, CUdeviceptr address, size_t bytes, int device);

// cuMemFreeAsync on `stream`: when it captures, a mem-free node (true, with
// the result); only memory the same graph allocated can be freed in it.
bool capture_free(CUstream_st* stream, CUdeviceptr address, CUresult& result);

// A stream is being destroyed: it leaves its capture.
void forget_stream_capture(CUstream_st* stream);

// Graphs built node by node (capture.cpp, graph_nodes_api.cpp). The lookups
// answer null for a handle that is not live; callers hold capture_mutex().
CUgraph_st* as_graph(CUgraph graph);
CUgraphExec_st* as_exec(CUgraphExec exec);
CUgraphNode_st* as_node(CUgraphNode node);
// cuGraphAdd*Node: appends `node` to `graph` after `dependencies` (nodes of
// the same graph). Takes capture_mutex().
CUresult add_node(CUgraphNode* out, CUgraph graph, const CUgraphNode* dependencies, size_t count,
                  std::unique_ptr<CUgraphNode_st> node);
// A kernel node's description and modelled duration.
std::unique_ptr<CUgraphNode_st> kernel_node(CUfunction function, const unsigned grid[3], const unsigned block[3],
                                            unsigned shared_bytes);
// A deep copy of `graph`, registered as a live graph. Caller holds capture_mutex().
CUgraph_st* clone_graph(const CUgraph_st& graph);

}  // namespace simgpu
