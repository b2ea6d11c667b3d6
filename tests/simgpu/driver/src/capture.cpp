// Stream capture and graphs: capture.h. The exported entry points are at the
// end; stream_api.cpp answers the capture queries from the same state.
#include "capture.h"

#include <algorithm>
#include <cstring>
#include <atomic>
#include <memory>
#include <unordered_set>

#include "api_guard.h"
#include "context.h"
#include "driver_state.h"
#include "event.h"
#include "kernel_cost.h"
#include "copy_engine.h"
#include "mempool.h"
#include "module.h"
#include "tools.h"

using namespace simgpu;

CUgraph_st::~CUgraph_st() {
  for (CUdeviceptr address : owned) free_pool_block_now(address);
}

CUgraphNode_st::~CUgraphNode_st() {
  if (child == nullptr) return;
  state().graphs.erase(child);
  delete child;
}

namespace simgpu {
namespace {

std::atomic<uint64_t> g_next_capture_id{1};
// Open captures, under capture_mutex().
std::vector<std::shared_ptr<Capture>>& open_captures() {
  static auto* captures = new std::vector<std::shared_ptr<Capture>>;
  return *captures;
}

void invalidate_locked(Capture& capture) { capture.invalidated = true; }

// The captures the calling thread conflicts with when it makes a
// potentially unsafe call in its current mode (cuda.h, CUstreamCaptureMode).
std::vector<Capture*> conflicting_captures_locked() {
  std::vector<Capture*> conflicts;
  const CUstreamCaptureMode mode = thread_capture_mode();
  if (mode == CU_STREAM_CAPTURE_MODE_RELAXED) return conflicts;
  const std::thread::id self = std::this_thread::get_id();
  for (const auto& capture : open_captures()) {
    const bool own = capture->thread == self && capture->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
    const bool global_elsewhere = mode == CU_STREAM_CAPTURE_MODE_GLOBAL && capture->thread != self &&
                                  capture->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
    if (own || global_elsewhere) conflicts.push_back(capture.get());
  }
  return conflicts;
}

CUgraphNode_st* add_node_locked(Capture& capture, CUstream_st* stream, StreamOperation& op) {
  auto node = std::make_unique<CUgraphNode_st>();
  node->graph = capture.graph;
  node->description = op.node;
  node->dependencies = stream->capture_dependencies;
  node->work.node = op.node;
  node->work.duration_ns = op.duration_ns;
  node->work.effect = std::move(op.effect);
  node->work.effect_time_counts = op.effect_time_counts;
  // The copy's direction and memory kinds; not the capturing call's correlation.
  node->work.tools = op.tools;
  node->work.tools.correlation_id = 0;
  CUgraphNode_st* raw = node.get();
  capture.graph->nodes.push_back(std::move(node));
  stream->capture_dependencies = {raw};
  return raw;
}

void end_capture_locked(const std::shared_ptr<Capture>& capture) {
  for (CUstream_st* stream : capture->streams) {
    stream->capture.reset();
    stream->capture_dependencies.clear();
  }
  auto& captures = open_captures();
  captures.erase(std::remove(captures.begin(), captures.end(), capture), captures.end());
}

}  // namespace

std::mutex& capture_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

CUstreamCaptureMode& thread_capture_mode() {
  thread_local CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
  return mode;
}

bool capture_submission(CUstream_st* stream, StreamOperation& op, CompletionRef& completion) {
  std::lock_guard lock(capture_mutex());
  if (!stream->capture) return false;
  Capture& capture = *stream->capture;
  if (op.node.type == CU_GRAPH_NODE_TYPE_EMPTY && !op.effect && op.duration_ns == 0) {
    // A marker (an event record): where the stream is in the capture.
    auto mark = std::make_shared<CaptureMark>();
    mark->capture = stream->capture;
    mark->dependencies = stream->capture_dependencies;
    completion = std::make_shared<Completion>();
    completion->capture_mark = std::move(mark);
    return true;
  }
  add_node_locked(capture, stream, op);
  completion = std::make_shared<Completion>();  // never completes: the work did not run
  return true;
}

CUresult check_capture_submit(CUstream_st* stream, bool synchronous) {
  {
  std::lock_guard lock(capture_mutex());
  if (stream->capture) {
    if (stream->capture->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (synchronous) {  // it would wait for work that does not run
      invalidate_locked(*stream->capture);
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return CUDA_SUCCESS;
  }
  if (stream->kind == StreamKind::kLegacy) {
    // The legacy stream synchronizes with every blocking stream of its
    // context: with one that captures, that cannot be captured.
    bool implicit = false;
    for (const auto& capture : open_captures()) {
      if (capture->context != stream->context) continue;
      for (CUstream_st* member : capture->streams) {
        if (member->is_blocking()) {
          invalidate_locked(*capture);
          implicit = true;
        }
      }
    }
    if (implicit) return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  }
  }
  if (synchronous) return check_unsafe_call();
  return CUDA_SUCCESS;
}

bool stream_captures(CUstream_st* stream) {
  std::lock_guard lock(capture_mutex());
  return stream->capture != nullptr;
}

CUresult check_unsafe_call() {
  std::lock_guard lock(capture_mutex());
  const std::vector<Capture*> conflicts = conflicting_captures_locked();
  if (conflicts.empty()) return CUDA_SUCCESS;
  for (Capture* capture : conflicts) invalidate_locked(*capture);
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

CUresult check_stream_wait_or_query(CUstream_st* stream) {
  {
    std::lock_guard lock(capture_mutex());
    if (stream->capture) {
      invalidate_locked(*stream->capture);
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
  }
  return check_unsafe_call();
}

bool capture_wait_event(CUstream_st* stream, const CompletionRef& recorded, CUresult& result) {
  std::lock_guard lock(capture_mutex());
  const std::shared_ptr<CaptureMark> mark = recorded ? recorded->capture_mark : nullptr;
  if (!mark) {
    // An event recorded outside any capture: an ordinary wait, except that a
    // capturing stream gains no dependency from it.
    if (stream->capture) {
      result = stream->capture->invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
      return true;
    }
    return false;
  }
  const std::shared_ptr<Capture>& capture = mark->capture;
  if (std::find(open_captures().begin(), open_captures().end(), capture) == open_captures().end()) {
    // Its capture ended: the event stands for work of a graph.
    result = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
    return true;
  }
  if (capture->invalidated) {
    result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    return true;
  }
  if (stream->capture && stream->capture != capture) {
    invalidate_locked(*stream->capture);
    invalidate_locked(*capture);
    result = CUDA_ERROR_STREAM_CAPTURE_MERGE;
    return true;
  }
  if (!stream->capture) {  // joins the capture
    stream->capture = capture;
    stream->capture_dependencies = mark->dependencies;
    capture->streams.push_back(stream);
  } else {
    for (CUgraphNode_st* node : mark->dependencies)
      if (std::find(stream->capture_dependencies.begin(), stream->capture_dependencies.end(), node) ==
          stream->capture_dependencies.end())
        stream->capture_dependencies.push_back(node);
  }
  result = CUDA_SUCCESS;
  return true;
}

CUresult check_event_of_capture(const CompletionRef& recorded) {
  if (recorded && recorded->capture_mark) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return CUDA_SUCCESS;
}

bool blocking_stream_captures_locked(CUctx_st* context) {
  for (const auto& capture : open_captures()) {
    if (capture->context != context) continue;
    for (CUstream_st* member : capture->streams)
      if (member->is_blocking()) return true;
  }
  return false;
}

void capture_allocation(CUstream_st* stream, CUdeviceptr address, size_t bytes, int device) {
  std::lock_guard lock(capture_mutex());
  if (!stream->capture) return;
  StreamOperation op;
  op.node.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
  op.node.bytes = bytes;
  op.node.dst = address;
  op.node.grid[0] = unsigned(device);  // the pool's device, for cuGraphMemAllocNodeGetParams
  add_node_locked(*stream->capture, stream, op);
  stream->capture->graph->owned.push_back(address);
}

bool capture_free(CUstream_st* stream, CUdeviceptr address, CUresult& result) {
  std::lock_guard lock(capture_mutex());
  if (!stream->capture) return false;
  Capture& capture = *stream->capture;
  const auto& owned = capture.graph->owned;
  if (std::find(owned.begin(), owned.end(), address) == owned.end()) {
    result = CUDA_ERROR_NOT_SUPPORTED;  // freeing memory from outside the graph: not simulated
    return true;
  }
  StreamOperation op;
  op.node.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
  op.node.dst = address;
  add_node_locked(capture, stream, op);
  result = capture.invalidated ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
  return true;
}

void forget_stream_capture(CUstream_st* stream) {
  std::lock_guard lock(capture_mutex());
  if (!stream->capture) return;
  auto& streams = stream->capture->streams;
  invalidate_locked(*stream->capture);
  streams.erase(std::remove(streams.begin(), streams.end(), stream), streams.end());
  stream->capture.reset();
}

}  // namespace simgpu

namespace {

CUresult begin_capture(CUstream hStream, CUstreamCaptureMode mode, NullStream null_means) {
  if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
      mode != CU_STREAM_CAPTURE_MODE_RELAXED)
    return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  // The legacy stream cannot be captured (cuda.h, cuStreamBeginCapture).
  if (stream->kind == StreamKind::kLegacy) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  std::lock_guard lock(capture_mutex());
  if (stream->capture) return CUDA_ERROR_ILLEGAL_STATE;
  auto capture = std::make_shared<Capture>();
  capture->id = g_next_capture_id.fetch_add(1);
  capture->mode = mode;
  capture->thread = std::this_thread::get_id();
  capture->context = stream->context;
  capture->origin = stream;
  capture->graph = new CUgraph_st;
  capture->streams.push_back(stream);
  state().graphs.insert(capture->graph);
  stream->capture = capture;
  stream->capture_dependencies.clear();
  open_captures().push_back(std::move(capture));
  return CUDA_SUCCESS;
}

CUresult end_capture(CUstream hStream, CUgraph* phGraph, NullStream null_means) {
  if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  std::lock_guard lock(capture_mutex());
  const std::shared_ptr<Capture> capture = stream->capture;
  if (!capture || capture->origin != stream) return CUDA_ERROR_ILLEGAL_STATE;
  if (capture->mode != CU_STREAM_CAPTURE_MODE_RELAXED && capture->thread != std::this_thread::get_id())
    return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
  *phGraph = nullptr;
  CUresult result = CUDA_SUCCESS;
  if (capture->invalidated) {
    result = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  } else {
    // Every joined stream must have joined back: its last work is a
    // dependency of the origin's.
    for (CUstream_st* member : capture->streams) {
      if (member == stream) continue;
      for (CUgraphNode_st* node : member->capture_dependencies) {
        const auto& mine = stream->capture_dependencies;
        bool reached = std::find(mine.begin(), mine.end(), node) != mine.end();
        // Reached through a later node of the origin.
        for (const auto& later : capture->graph->nodes) {
          if (reached) break;
          const auto& deps = later->dependencies;
          reached = std::find(deps.begin(), deps.end(), node) != deps.end();
        }
        if (!reached) result = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
      }
    }
  }
  end_capture_locked(capture);
  if (result == CUDA_SUCCESS) {
    *phGraph = capture->graph;
  } else {
    state().graphs.erase(capture->graph);
    delete capture->graph;
  }
  return result;
}

}  // namespace

namespace simgpu {

CUgraph_st* as_graph(CUgraph graph) { return graph && state().graphs.contains(graph) ? graph : nullptr; }
CUgraphExec_st* as_exec(CUgraphExec exec) { return exec && state().graph_execs.contains(exec) ? exec : nullptr; }

CUgraphNode_st* as_node(CUgraphNode node) {
  // Nodes live in their graph; a node whose graph is gone is not looked at.
  return node && state().graphs.contains(node->graph) ? node : nullptr;
}

bool graph_node_known_locked(CUgraphNode node) { return as_node(node) != nullptr; }
// The clones of every live executable graph (never destroyed: exit-safe).
std::unordered_set<const CUgraphNode_st*>& live_clones() {
  static auto* clones = new std::unordered_set<const CUgraphNode_st*>;
  return *clones;
}
bool graph_node_clone_known_locked(CUgraphNode node) { return node != nullptr && live_clones().contains(node); }
uint32_t next_graph_tools_id() {
  static std::atomic<uint32_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
uint64_t next_node_tools_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace simgpu

namespace simgpu {

// cuGraphAdd*Node: a node of `graph` after `dependencies` (nodes of the same graph).
CUresult add_node(CUgraphNode* out, CUgraph hGraph, const CUgraphNode* dependencies, size_t count,
                  std::unique_ptr<CUgraphNode_st> node) {
  if (!out || (count && !dependencies)) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(capture_mutex());
  CUgraph_st* graph = as_graph(hGraph);
  if (!graph) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i) {
    if (!dependencies[i] || dependencies[i]->graph != graph) return CUDA_ERROR_INVALID_VALUE;
    node->dependencies.push_back(dependencies[i]);
  }
  node->graph = graph;
  *out = node.get();
  graph->nodes.push_back(std::move(node));
  return CUDA_SUCCESS;
}

std::unique_ptr<CUgraphNode_st> kernel_node(CUfunction function, const unsigned grid[3], const unsigned block[3],
                                            unsigned shared_bytes) {
  auto node = std::make_unique<CUgraphNode_st>();
  NodeDescription& d = node->description;
  d.type = CU_GRAPH_NODE_TYPE_KERNEL;
  d.function = function;
  for (int i = 0; i < 3; ++i) d.grid[i] = grid[i], d.block[i] = block[i];
  d.shared_bytes = shared_bytes;
  node->work.node = d;
  if (CUfunc_st* f = as_function(function)) {
    node->work.duration_ns = kernel_duration_ns(kernel_cost(f->info.name),
                                                uint64_t(grid[0]) * grid[1] * grid[2], state().config.sm_count);
  }
  return node;
}

// A deep copy of `graph` (cuGraphAddChildGraphNode embeds a clone).
CUgraph_st* clone_graph(const CUgraph_st& graph) {
  auto* copy = new CUgraph_st;
  for (const auto& node : graph.nodes) {
    auto out = std::make_unique<CUgraphNode_st>();
    out->graph = copy;
    out->description = node->description;
    out->work.node = node->work.node;
    out->work.duration_ns = node->work.duration_ns;
    out->work.effect = node->work.effect;
    out->work.effect_time_counts = node->work.effect_time_counts;
    if (node->child) out->child = clone_graph(*node->child);
    for (CUgraphNode_st* dependency : node->dependencies)
      for (size_t j = 0; j < copy->nodes.size(); ++j)
        if (graph.nodes[j].get() == dependency) out->dependencies.push_back(copy->nodes[j].get());
    copy->nodes.push_back(std::move(out));
  }
  state().graphs.insert(copy);  // its nodes can be queried (cuGraphChildGraphNodeGetGraph)
  return copy;
}

}  // namespace simgpu

namespace {

CUresult instantiate_locked(CUgraphExec* phGraphExec, CUgraph hGraph, CUctx_st* context);

// The lanes are streams: made without the capture mutex (stream creation
// takes the context's submit mutex, which submit() holds before it).
CUresult instantiate(CUgraphExec* phGraphExec, CUgraph hGraph) {
  if (!phGraphExec) return CUDA_ERROR_INVALID_VALUE;
  CUctx_st* context = nullptr;
  if (CUresult result = require_current_context(context); result != CUDA_SUCCESS) return result;
  // Potentially unsafe: on an H200 (driver 580) cudaGraphInstantiate on one
  // thread, while another thread's global-mode capture was open, returned
  // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidated that capture.
  if (CUresult result = check_unsafe_call(); result != CUDA_SUCCESS) return result;
  {
    std::lock_guard lock(capture_mutex());
    if (CUresult result = instantiate_locked(phGraphExec, hGraph, context); result != CUDA_SUCCESS) return result;
  }
  // A tool hears of each clone while the call runs (it may ask the driver
  // about them: outside the lock).
  for (const CUgraphExec_st::Node& node : (*phGraphExec)->nodes)
    tools::graph_node_cloned(context, *phGraphExec, node.origin->graph, node.clone,
                             const_cast<CUgraphNode_st*>(node.origin), node.clone->description.type);
  for (CUstream_st*& lane : (*phGraphExec)->lanes)
    lane = create_stream(context, StreamKind::kCreated, CU_STREAM_NON_BLOCKING, 0);
  return CUDA_SUCCESS;
}

// Appends `graph`'s nodes to `exec`, each after `after` (the indices its
// roots wait for); returns the indices of its nodes. A child graph's nodes
// are inlined, and the child node itself becomes a join of them.
std::vector<size_t> flatten(CUgraphExec_st& exec, const CUgraph_st& graph, const std::vector<size_t>& after,
                            size_t& lanes, std::vector<size_t>& lane_of, int depth) {
  std::vector<size_t> index_of(graph.nodes.size());
  std::vector<size_t> all;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const CUgraphNode_st& node = *graph.nodes[i];
    std::vector<size_t> dependencies;
    for (CUgraphNode_st* dependency : node.dependencies)
      for (size_t j = 0; j < i; ++j)
        if (graph.nodes[j].get() == dependency) dependencies.push_back(index_of[j]);
    if (node.dependencies.empty()) dependencies = after;
    if (node.child != nullptr && depth < 8) {
      const std::vector<size_t> inner = flatten(exec, *node.child, dependencies, lanes, lane_of, depth + 1);
      dependencies.insert(dependencies.end(), inner.begin(), inner.end());
      all.insert(all.end(), inner.begin(), inner.end());
    }
    CUgraphExec_st::Node out;
    out.work.node = node.work.node;
    out.work.duration_ns = node.work.duration_ns;
    out.work.effect = node.work.effect;
    out.work.effect_time_counts = node.work.effect_time_counts;
    out.work.tools = node.work.tools;
    auto clone = std::make_unique<CUgraphNode_st>();
    clone->description = node.description;
    out.clone = clone.get();
    out.work.tools.graph_node_id = clone->tools_id;
    exec.clones.push_back(std::move(clone));
    out.dependencies = dependencies;
    out.origin = &node;
    // A chain stays on its lane; a new branch or a join gets the next one.
    out.lane = dependencies.size() == 1 ? lane_of[dependencies[0]] : lanes++ % 4;
    lane_of.push_back(out.lane);
    index_of[i] = exec.nodes.size();
    all.push_back(exec.nodes.size());
    exec.nodes.push_back(std::move(out));
  }
  return all;
}

CUresult instantiate_locked(CUgraphExec* phGraphExec, CUgraph hGraph, CUctx_st* context) {
  CUgraph_st* graph = as_graph(hGraph);
  if (!graph) return CUDA_ERROR_INVALID_VALUE;
  auto* exec = new CUgraphExec_st;
  exec->context = context;
  size_t lanes = 0;
  std::vector<size_t> lane_of;
  flatten(*exec, *graph, {}, lanes, lane_of, 0);
  for (CUgraphExec_st::Node& node : exec->nodes) node.work.tools.graph_id = graph->tools_id;
  for (const auto& clone : exec->clones) live_clones().insert(clone.get());
  exec->lanes.resize(std::min<size_t>(std::max<size_t>(lanes, 1), 4), nullptr);
  state().graph_execs.insert(exec);
  *phGraphExec = exec;
  return CUDA_SUCCESS;
}

CUresult launch_graph(CUgraphExec hGraphExec, CUstream hStream, NullStream null_means) {
  CUstream_st* stream = nullptr;
  if (CUresult result = resolve_stream(hStream, null_means, stream); result != CUDA_SUCCESS) return result;
  if (CUresult result = check_capture_submit(stream, false); result != CUDA_SUCCESS) return result;
  CUgraphExec_st* exec = nullptr;
  {
    std::lock_guard lock(capture_mutex());
    exec = as_exec(hGraphExec);
  }
  if (!exec) return CUDA_ERROR_INVALID_VALUE;
  if (exec->context != stream->context) return CUDA_ERROR_INVALID_CONTEXT;
  // The graph starts after the stream's prior work; each node after its
  // dependencies, on its lane; the stream goes on after every node.
  CompletionRef before = last_submitted(stream);
  std::vector<CompletionRef> done(exec->nodes.size());
  for (size_t i = 0; i < exec->nodes.size(); ++i) {
    const CUgraphExec_st::Node& node = exec->nodes[i];
    StreamOperation op;
    op.node = node.work.node;
    op.duration_ns = node.work.duration_ns;
    op.effect = node.work.effect;
    op.effect_time_counts = node.work.effect_time_counts;
    op.tools = node.work.tools;
    if (before) op.waits.push_back(before);
    for (size_t dependency : node.dependencies) op.waits.push_back(done[dependency]);
    CUevent_st* event = node.work.node.event;
    if (op.node.type == CU_GRAPH_NODE_TYPE_WAIT_EVENT && event && state().events.contains(event)) {
      // Waits for the event's newest record at launch time (cuGraphAddEventWaitNode).
      std::lock_guard event_lock(event->mutex);
      if (event->recorded && !event->recorded->capture_mark) op.waits.push_back(event->recorded);
    }
    done[i] = submit(exec->lanes[node.lane % exec->lanes.size()], std::move(op));
    if (node.work.node.type == CU_GRAPH_NODE_TYPE_EVENT_RECORD && event && state().events.contains(event)) {
      // The event now stands for this node's completion, as cuEventRecord.
      std::lock_guard event_lock(event->mutex);
      event->recorded = done[i];
    }
  }
  StreamOperation join;
  for (const CompletionRef& completion : done) join.waits.push_back(completion);
  submit(stream, std::move(join));
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream) {
  return api_call([&] { return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream) {
  return api_call([&] { return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, NullStream::kPerThread); });
}
CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return api_call([&] { return begin_capture(hStream, mode, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return api_call([&] { return begin_capture(hStream, mode, NullStream::kPerThread); });
}
CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) {
  return api_call([&] { return end_capture(hStream, phGraph, NullStream::kLegacy); });
}
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return api_call([&] { return end_capture(hStream, phGraph, NullStream::kPerThread); });
}

CUresult CUDAAPI cuGraphCreate(CUgraph* phGraph, unsigned int flags) {
  return api_call([&] {
    if (!phGraph || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    *phGraph = new CUgraph_st;
    state().graphs.insert(*phGraph);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
  return api_call([&] {
    std::lock_guard lock(capture_mutex());
    CUgraph_st* graph = as_graph(hGraph);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    state().graphs.erase(graph);
    delete graph;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode* nodes, size_t* numNodes) {
  return api_call([&] {
    if (!numNodes) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraph_st* graph = as_graph(hGraph);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    if (nodes) {
      const size_t count = std::min(*numNodes, graph->nodes.size());
      for (size_t i = 0; i < count; ++i) nodes[i] = graph->nodes[i].get();
      for (size_t i = count; i < *numNodes; ++i) nodes[i] = nullptr;
    }
    *numNodes = graph->nodes.size();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType* type) {
  return api_call([&] {
    if (!type) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    *type = node->description.type;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode* dependencies, size_t* numDependencies) {
  return api_call([&] {
    if (!numDependencies) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node) return CUDA_ERROR_INVALID_VALUE;
    if (dependencies) {
      const size_t count = std::min(*numDependencies, node->dependencies.size());
      for (size_t i = 0; i < count; ++i) dependencies[i] = node->dependencies[i];
      for (size_t i = count; i < *numDependencies; ++i) dependencies[i] = nullptr;
    }
    *numDependencies = node->dependencies.size();
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode* dependencies, CUgraphEdgeData* edgeData,
                                               size_t* numDependencies) {
  const CUresult result = cuGraphNodeGetDependencies(hNode, dependencies, numDependencies);
  if (result == CUDA_SUCCESS && edgeData && dependencies) {
    for (size_t i = 0; i < *numDependencies; ++i) edgeData[i] = CUgraphEdgeData{};
  }
  return result;
}

CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2* params) {
  return api_call([&] {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
    const NodeDescription& d = node->description;
    *params = CUDA_KERNEL_NODE_PARAMS_v2{};
    params->func = d.function;
    params->gridDimX = d.grid[0];
    params->gridDimY = d.grid[1];
    params->gridDimZ = d.grid[2];
    params->blockDimX = d.block[0];
    params->blockDimY = d.block[1];
    params->blockDimZ = d.block[2];
    params->sharedMemBytes = d.shared_bytes;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D* params) {
  return api_call([&] {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_MEMCPY) return CUDA_ERROR_INVALID_VALUE;
    *params = CUDA_MEMCPY3D{};
    params->WidthInBytes = node->description.bytes;
    params->Height = 1;
    params->Depth = 1;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS* params) {
  return api_call([&] {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_MEMSET) return CUDA_ERROR_INVALID_VALUE;
    *params = CUDA_MEMSET_NODE_PARAMS{};
    params->dst = node->description.dst;
    params->elementSize = 1;
    params->width = node->description.bytes;
    params->height = 1;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  return api_call([&] {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_MEM_ALLOC) return CUDA_ERROR_INVALID_VALUE;
    *params = CUDA_MEM_ALLOC_NODE_PARAMS{};
    params->poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    params->poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    params->poolProps.location.id = int(node->description.grid[0]);
    params->bytesize = node->description.bytes;
    params->dptr = node->description.dst;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr* dptr_out) {
  return api_call([&] {
    if (!dptr_out) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_MEM_FREE) return CUDA_ERROR_INVALID_VALUE;
    *dptr_out = node->description.dst;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS* params) {
  return api_call([&] {
    if (!params) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || node->description.type != CU_GRAPH_NODE_TYPE_HOST) return CUDA_ERROR_INVALID_VALUE;
    params->fn = node->description.host_fn;
    params->userData = node->description.user_data;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                         size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v2* nodeParams) {
  return api_call([&] {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUfunction function = nodeParams->func;
    if (!function && nodeParams->kern) function = reinterpret_cast<CUfunction>(nodeParams->kern);
    if (!as_function(function)) return CUDA_ERROR_INVALID_VALUE;
    const unsigned grid[3] = {nodeParams->gridDimX, nodeParams->gridDimY, nodeParams->gridDimZ};
    const unsigned block[3] = {nodeParams->blockDimX, nodeParams->blockDimY, nodeParams->blockDimZ};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies,
                    kernel_node(function, grid, block, nodeParams->sharedMemBytes));
  });
}
CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                      size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 params{};
  params.func = nodeParams->func;
  params.gridDimX = nodeParams->gridDimX, params.gridDimY = nodeParams->gridDimY, params.gridDimZ = nodeParams->gridDimZ;
  params.blockDimX = nodeParams->blockDimX, params.blockDimY = nodeParams->blockDimY;
  params.blockDimZ = nodeParams->blockDimZ;
  params.sharedMemBytes = nodeParams->sharedMemBytes;
  params.kernelParams = nodeParams->kernelParams;
  params.extra = nodeParams->extra;
  return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &params);
}

// A linear or pitched copy between host and device memory, copied for real
// when the node runs.
CUresult CUDAAPI cuGraphAddMemcpyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                      size_t numDependencies, const CUDA_MEMCPY3D* copyParams, CUcontext ctx) {
  return api_call([&] {
    (void)ctx;
    if (!copyParams) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_MEMCPY3D p = *copyParams;
    if (p.srcMemoryType == CU_MEMORYTYPE_ARRAY || p.dstMemoryType == CU_MEMORYTYPE_ARRAY) return CUDA_ERROR_NOT_SUPPORTED;
    auto base = [](CUmemorytype type, const void* host, CUdeviceptr device) {
      return type == CU_MEMORYTYPE_HOST ? reinterpret_cast<uintptr_t>(host) : uintptr_t(device);
    };
    const uintptr_t src = base(p.srcMemoryType, p.srcHost, p.srcDevice);
    const uintptr_t dst = base(p.dstMemoryType, p.dstHost, p.dstDevice);
    if (!src || !dst) return CUDA_ERROR_INVALID_VALUE;
    const size_t height = p.Height ? p.Height : 1, depth = p.Depth ? p.Depth : 1;
    const size_t src_pitch = p.srcPitch ? p.srcPitch : p.WidthInBytes, dst_pitch = p.dstPitch ? p.dstPitch : p.WidthInBytes;
    const size_t src_height = p.srcHeight ? p.srcHeight : height, dst_height = p.dstHeight ? p.dstHeight : height;
    auto node = std::make_unique<CUgraphNode_st>();
    node->description.type = CU_GRAPH_NODE_TYPE_MEMCPY;
    node->description.bytes = p.WidthInBytes * height * depth;
    node->work.node = node->description;
    const bool from_host = p.srcMemoryType == CU_MEMORYTYPE_HOST, to_host = p.dstMemoryType == CU_MEMORYTYPE_HOST;
    const CopyKind kind = from_host ? (to_host ? CopyKind::kHostToHost : CopyKind::kHostToDevice)
                                    : (to_host ? CopyKind::kDeviceToHost : CopyKind::kDeviceToDevice);
    node->work.duration_ns = transfer_duration_ns(kind, node->description.bytes);
    node->work.effect = [p, src, dst, height, depth, src_pitch, dst_pitch, src_height, dst_height] {
      for (size_t z = 0; z < depth; ++z)
        for (size_t y = 0; y < height; ++y)
          std::memcpy(reinterpret_cast<void*>(dst + p.dstXInBytes + (p.dstY + y) * dst_pitch +
                                              (p.dstZ + z) * dst_height * dst_pitch),
                      reinterpret_cast<const void*>(src + p.srcXInBytes + (p.srcY + y) * src_pitch +
                                                    (p.srcZ + z) * src_height * src_pitch),
                      p.WidthInBytes);
    };
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
  });
}

CUresult CUDAAPI cuGraphAddMemsetNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                      size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS* memsetParams,
                                      CUcontext ctx) {
  return api_call([&] {
    (void)ctx;
    if (!memsetParams || !memsetParams->dst || memsetParams->width == 0) return CUDA_ERROR_INVALID_VALUE;
    const CUDA_MEMSET_NODE_PARAMS p = *memsetParams;
    if (p.elementSize != 1 && p.elementSize != 2 && p.elementSize != 4) return CUDA_ERROR_INVALID_VALUE;
    const size_t height = p.height ? p.height : 1;
    auto node = std::make_unique<CUgraphNode_st>();
    node->description.type = CU_GRAPH_NODE_TYPE_MEMSET;
    node->description.dst = p.dst;
    node->description.bytes = size_t(p.elementSize) * p.width * height;
    node->work.node = node->description;
    node->work.duration_ns = transfer_duration_ns(CopyKind::kMemset, node->description.bytes);
    node->work.effect = [p, height] {
      const size_t pitch = p.pitch ? p.pitch : size_t(p.elementSize) * p.width;
      for (size_t row = 0; row < height; ++row) {
        auto* out = reinterpret_cast<unsigned char*>(p.dst + row * pitch);
        for (size_t i = 0; i < p.width; ++i) std::memcpy(out + i * p.elementSize, &p.value, p.elementSize);
      }
    };
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
  });
}

CUresult CUDAAPI cuGraphAddHostNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                    size_t numDependencies, const CUDA_HOST_NODE_PARAMS* nodeParams) {
  return api_call([&] {
    if (!nodeParams || !nodeParams->fn) return CUDA_ERROR_INVALID_VALUE;
    auto node = std::make_unique<CUgraphNode_st>();
    node->description.type = CU_GRAPH_NODE_TYPE_HOST;
    node->description.host_fn = nodeParams->fn;
    node->description.user_data = nodeParams->userData;
    node->work.node = node->description;
    const CUhostFn fn = nodeParams->fn;
    void* user = nodeParams->userData;
    node->work.effect = [fn, user] { fn(user); };
    node->work.effect_time_counts = true;
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
  });
}

CUresult CUDAAPI cuGraphAddEmptyNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                     size_t numDependencies) {
  return api_call([&] {
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, std::make_unique<CUgraphNode_st>());
  });
}

CUresult CUDAAPI cuGraphAddChildGraphNode(CUgraphNode* phGraphNode, CUgraph hGraph, const CUgraphNode* dependencies,
                                          size_t numDependencies, CUgraph childGraph) {
  return api_call([&] {
    auto node = std::make_unique<CUgraphNode_st>();
    {
      std::lock_guard lock(capture_mutex());
      CUgraph_st* child = as_graph(childGraph);
      if (!child || child == hGraph) return CUDA_ERROR_INVALID_VALUE;
      node->child = clone_graph(*child);
    }
    node->description.type = CU_GRAPH_NODE_TYPE_GRAPH;
    node->work.node = node->description;
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, std::move(node));
  });
}

CUresult CUDAAPI cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph* phGraph) {
  return api_call([&] {
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphNode_st* node = as_node(hNode);
    if (!node || !node->child) return CUDA_ERROR_INVALID_VALUE;
    *phGraph = node->child;  // owned by the node, as documented
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                        size_t numDependencies) {
  return api_call([&] {
    if (numDependencies && (!from || !to)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraph_st* graph = as_graph(hGraph);
    if (!graph) return CUDA_ERROR_INVALID_VALUE;
    auto position = [&](CUgraphNode node) -> size_t {
      for (size_t i = 0; i < graph->nodes.size(); ++i)
        if (graph->nodes[i].get() == node) return i;
      return graph->nodes.size();
    };
    for (size_t i = 0; i < numDependencies; ++i) {
      const size_t a = position(from[i]), b = position(to[i]);
      if (a == graph->nodes.size() || b == graph->nodes.size() || a == b) return CUDA_ERROR_INVALID_VALUE;
      // Nodes are kept with dependencies first; an edge against that order
      // would need a reordering the simulator does not do.
      if (a > b) return CUDA_ERROR_NOT_SUPPORTED;
      auto& deps = graph->nodes[b]->dependencies;
      if (std::find(deps.begin(), deps.end(), from[i]) != deps.end()) return CUDA_ERROR_INVALID_VALUE;
      deps.push_back(from[i]);
    }
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode* from, const CUgraphNode* to,
                                           const CUgraphEdgeData* edgeData, size_t numDependencies) {
  (void)edgeData;
  return cuGraphAddDependencies(hGraph, from, to, numDependencies);
}

CUresult CUDAAPI cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                   const CUDA_KERNEL_NODE_PARAMS_v2* nodeParams) {
  return api_call([&] {
    if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
    CUfunction function = nodeParams->func ? nodeParams->func : reinterpret_cast<CUfunction>(nodeParams->kern);
    if (!as_function(function)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(capture_mutex());
    CUgraphExec_st* exec = as_exec(hGraphExec);
    if (!exec) return CUDA_ERROR_INVALID_VALUE;
    for (CUgraphExec_st::Node& node : exec->nodes) {
      if (node.origin != hNode) continue;
      if (node.work.node.type != CU_GRAPH_NODE_TYPE_KERNEL) return CUDA_ERROR_INVALID_VALUE;
      const unsigned grid[3] = {nodeParams->gridDimX, nodeParams->gridDimY, nodeParams->gridDimZ};
      const unsigned block[3] = {nodeParams->blockDimX, nodeParams->blockDimY, nodeParams->blockDimZ};
      auto made = kernel_node(function, grid, block, nodeParams->sharedMemBytes);
      node.work.node = made->work.node;
      node.work.duration_ns = made->work.duration_ns;
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
  });
}
CUresult CUDAAPI cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_KERNEL_NODE_PARAMS_v1* nodeParams) {
  if (!nodeParams) return CUDA_ERROR_INVALID_VALUE;
  CUDA_KERNEL_NODE_PARAMS_v2 params{};
  params.func = nodeParams->func;
  params.gridDimX = nodeParams->gridDimX, params.gridDimY = nodeParams->gridDimY, params.gridDimZ = nodeParams->gridDimZ;
  params.blockDimX = nodeParams->blockDimX, params.blockDimY = nodeParams->blockDimY;
  params.blockDimZ = nodeParams->blockDimZ;
  params.sharedMemBytes = nodeParams->sharedMemBytes;
  return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &params);
}

// The executable graph takes `hGraph`'s parameters when the two have the
// same topology and node types (cuda.h, cuGraphExecUpdate); otherwise it is
// left as it was and the update fails.
CUresult CUDAAPI cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo* resultInfo) {
  return api_call([&] {
    std::lock_guard lock(capture_mutex());
    CUgraphExec_st* exec = as_exec(hGraphExec);
    CUgraph_st* graph = as_graph(hGraph);
    if (!exec || !graph) return CUDA_ERROR_INVALID_VALUE;
    CUgraphExec_st fresh;
    size_t lanes = 0;
    std::vector<size_t> lane_of;
    flatten(fresh, *graph, {}, lanes, lane_of, 0);
    CUgraphExecUpdateResult outcome = CU_GRAPH_EXEC_UPDATE_SUCCESS;
    if (fresh.nodes.size() != exec->nodes.size()) outcome = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; outcome == CU_GRAPH_EXEC_UPDATE_SUCCESS && i < fresh.nodes.size(); ++i) {
      if (fresh.nodes[i].work.node.type != exec->nodes[i].work.node.type)
        outcome = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
      else if (fresh.nodes[i].dependencies != exec->nodes[i].dependencies)
        outcome = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    }
    if (resultInfo) {
      *resultInfo = CUgraphExecUpdateResultInfo{};
      resultInfo->result = outcome;
    }
    if (outcome != CU_GRAPH_EXEC_UPDATE_SUCCESS) return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    for (size_t i = 0; i < fresh.nodes.size(); ++i) {
      // The executable graph keeps its nodes (their clones and ids); only
      // their parameters change.
      fresh.nodes[i].lane = exec->nodes[i].lane;
      fresh.nodes[i].clone = exec->nodes[i].clone;
      fresh.nodes[i].work.tools.graph_node_id = exec->nodes[i].work.tools.graph_node_id;
      fresh.nodes[i].work.tools.graph_id = exec->nodes[i].work.tools.graph_id;
      exec->nodes[i] = std::move(fresh.nodes[i]);
    }
    return CUDA_SUCCESS;
  });
}
CUresult CUDAAPI cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode* hErrorNode_out,
                                   CUgraphExecUpdateResult* updateResult_out) {
  CUgraphExecUpdateResultInfo info{};
  const CUresult result = cuGraphExecUpdate_v2(hGraphExec, hGraph, &info);
  if (hErrorNode_out) *hErrorNode_out = info.errorNode;
  if (updateResult_out) *updateResult_out = info.result;
  return result;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long flags) {
  return api_call([&] {
    (void)flags;
    return instantiate(phGraphExec, hGraph);
  });
}
CUresult CUDAAPI cuGraphInstantiate(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                    char* logBuffer, size_t bufferSize) {
  return api_call([&] {
    if (phErrorNode) *phErrorNode = nullptr;
    if (logBuffer && bufferSize) logBuffer[0] = '\0';
    return instantiate(phGraphExec, hGraph);
  });
}
CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec* phGraphExec, CUgraph hGraph, CUgraphNode* phErrorNode,
                                       char* logBuffer, size_t bufferSize) {
  return cuGraphInstantiate(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}
CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec* phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return api_call([&] {
    const CUresult result = instantiate(phGraphExec, hGraph);
    if (params) params->result_out = result == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return result;
  });
}
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec* phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS* params) {
  return cuGraphInstantiateWithParams(phGraphExec, hGraph, params);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return api_call([&] {
    CUgraphExec_st* exec = nullptr;
    {
      std::lock_guard lock(capture_mutex());
      exec = as_exec(hGraphExec);
      if (!exec) return CUDA_ERROR_INVALID_VALUE;
      state().graph_execs.erase(exec);
      for (const auto& clone : exec->clones) live_clones().erase(clone.get());
    }
    // Its lanes finish what they have queued, then go (as cuStreamDestroy).
    for (CUstream_st* lane : exec->lanes) destroy_stream(lane);
    delete exec;
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  return api_call([&] { return launch_graph(hGraphExec, hStream, NullStream::kLegacy); });
}
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return api_call([&] { return launch_graph(hGraphExec, hStream, NullStream::kPerThread); });
}
CUresult CUDAAPI cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream) {
  return api_call([&] {
    CUstream_st* stream = nullptr;
    if (CUresult result = resolve_stream(hStream, NullStream::kLegacy, stream); result != CUDA_SUCCESS) return result;
    std::lock_guard lock(capture_mutex());
    return as_exec(hGraphExec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  });
}

}  // extern "C"
