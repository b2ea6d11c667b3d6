// Streams: each runs its operations in order on its own worker thread, so work
// on different streams really overlaps in time and work on one stream never does.
//
// Time model. Every operation gets a modelled start and end on the device clock
// (CLOCK_MONOTONIC ns):
//   start = max(submit time + launch latency, end of the previous operation on
//               this stream, end of every operation it waits for)
//   end   = start + modelled duration
// The worker performs the operation's real effect (copy, memset, host function),
// then sleeps until `end` before it marks the operation complete. So the host
// never observes completion before the modelled end, and modelled times never
// accumulate the worker's own oversleep: back-to-back operations are exactly
// their modelled durations apart.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "cuda_api.h"

struct CUgraphNode_st;

namespace simgpu {

struct Capture;
struct CaptureMark;

// Completion of one stream operation; events and dependent operations hold it.
struct Completion {
  std::atomic<uint32_t> done{0};
  // Written by the worker before `done` is released.
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  // Set instead of ever completing when the operation was captured into a
  // graph (an event recorded on a capturing stream): capture.h.
  std::shared_ptr<CaptureMark> capture_mark;

  bool is_done() const { return done.load(std::memory_order_acquire) != 0; }
  void wait() const {
    while (!is_done()) done.wait(0, std::memory_order_acquire);
  }
};
using CompletionRef = std::shared_ptr<Completion>;

// What a graph node made from this operation says about it
// (cuGraphNodeGetType, cuGraphKernelNodeGetParams, ...). EMPTY: not a node
// (event markers, waits).
struct NodeDescription {
  CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
  CUfunction function = nullptr;
  unsigned grid[3] = {0, 0, 0};
  unsigned block[3] = {0, 0, 0};
  unsigned shared_bytes = 0;
  size_t bytes = 0;          // memcpy, memset
  CUdeviceptr dst = 0;       // memset
  CUhostFn host_fn = nullptr;
  void* user_data = nullptr;
  CUevent event = nullptr;   // event record and event wait nodes
};

struct StreamOperation {
  NodeDescription node;
  int64_t submit_ns = 0;
  int64_t duration_ns = 0;
  // The device-side effect, run on the worker when the operation starts.
  std::function<void()> effect;
  // Host functions take as long as they take: their end is max(modelled end, now).
  bool effect_time_counts = false;
  std::vector<CompletionRef> waits;
  CompletionRef completion = std::make_shared<Completion>();
  // Completed when the operation starts (start and end both its start): what
  // an event bound to the start of a kernel's dispatch refers to (HIP's
  // hipExtLaunchKernel start event). Null for other operations.
  CompletionRef started;
  // What a tools library is told once the operation completed (tools.h).
  struct ToolsInfo {
    uint32_t correlation_id = 0;  // the submitting call's (set by submit())
    uint32_t graph_id = 0;        // work a graph launch ran: the graph and its node
    uint64_t graph_node_id = 0;
    uint8_t copy_kind = 0;        // SimgpuToolsCopyKind
    uint8_t src_kind = 0;         // SimgpuToolsMemoryKind (0: pageable)
    uint8_t dst_kind = 0;
  } tools;
};

enum class StreamKind { kCreated, kLegacy, kPerThread };

}  // namespace simgpu

struct CUstream_st {
  CUctx_st* context = nullptr;
  simgpu::StreamKind kind = simgpu::StreamKind::kCreated;
  // Stream capture (capture.h), under simgpu::capture_mutex(): the capture
  // this stream belongs to, and the nodes new work depends on.
  std::shared_ptr<simgpu::Capture> capture;
  std::vector<CUgraphNode_st*> capture_dependencies;
  unsigned flags = 0;  // CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING
  int priority = 0;
  unsigned long long id = 0;

  // cuStreamSetAttribute's settings; hints without a simulated effect.
  std::mutex attribute_mutex;
  CUaccessPolicyWindow access_policy_window{};
  CUsynchronizationPolicy sync_policy = CU_SYNC_POLICY_AUTO;
  CUlaunchMemSyncDomainMap mem_sync_domain_map{0, 1};
  CUlaunchMemSyncDomain mem_sync_domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
  bool nvlink_util_centric = false;

  // Guarded by the owning context's submit_mutex: the newest submitted operation.
  simgpu::CompletionRef last_submitted;

  // The queue between submitters and the worker.
  std::mutex queue_mutex;
  std::condition_variable queue_cv;
  std::deque<simgpu::StreamOperation> queue;
  bool closing = false;

  bool is_blocking() const { return (flags & CU_STREAM_NON_BLOCKING) == 0; }
};

namespace simgpu {

// Creates a stream of `context` with its worker and adds it to the context's list.
CUstream_st* create_stream(CUctx_st* context, StreamKind kind, unsigned flags, int priority);

// Removes the stream from its context; its worker finishes the queued work, then
// exits and frees it (cuStreamDestroy returns at once, as documented).
void destroy_stream(CUstream_st* stream);

// The two halves of destroy_stream, for callers that decide under the context's
// submit_mutex (held for detach_stream_locked) which streams to destroy.
void detach_stream_locked(CUstream_st* stream);
void close_stream(CUstream_st* stream);

// Queues `op` on `stream` in submission order and adds the implicit waits of the
// legacy default stream semantics. Returns the operation's completion.
CompletionRef submit(CUstream_st* stream, StreamOperation op);

// Completion of the newest operation submitted to `stream` (nullptr if none).
CompletionRef last_submitted(CUstream_st* stream);

}  // namespace simgpu
