// The CUPTI backend (gpu_timing_cupti.h).
//
// Joins. Each hooked operation learns the CUPTI correlation id of the call it
// made through the Callback API: the backend enables the driver and runtime
// callbacks of the calls that submit work (launches, copies, memsets, graph
// launches) and notes the id at their entry in thread-local storage; the
// operation takes it right after the real call (returned()). CUPTI's
// kernel, memcpy and memset records carry the same id, so the writer joins
// them to the operation exactly. (External correlation ids would need a
// DRIVER or RUNTIME activity record for every API call of the program,
// as CUPTI's header documents; docs/gpu-time.md. Not measured.)
//
// Threads. CUPTI hands buffers back on its own thread: the callback only
// queues them. The writer thread parses them (a writer task), so the
// records land in the file behind the operations they time. CUPTI is never
// called while the backend's own lock is held.
#include "preload/osrt/osrt.h"
#include "preload/cuda/cupti/gpu_timing_cupti.h"

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "preload/base/clock.h"
#include "preload/base/fork_leftovers.h"
#include "preload/base/lazy_global.h"
#include "preload/base/log.h"
#include "preload/cuda/cupti/cupti_library.h"
#include "preload/cuda/gpu_timing_events.h"
#include "preload/cuda/pending_operations.h"
#include "preload/record/definitions.h"
#include "preload/state/runtime_state.h"
#include "preload/writer/writer.h"
#include "preload/writer/writer_tasks.h"

namespace proflaunch::cuda {
namespace {

constexpr size_t kBufferBytes = 4u << 20;
// A CUPTI record whose operation the writer has not seen yet waits this many
// writer cycles before it counts as unattributed work (the operation's hook
// queues it after the real call returns; a short kernel can finish first).
constexpr int kOrphanCycles = 3;
// How often the writer asks CUPTI for the records it holds.
constexpr uint64_t kFlushEveryNs = 200'000'000;

enum class State : int { kUnstarted, kRunning, kFailed, kYielded };

struct Pending {
  uint64_t correlation_id;  // the shim's
  uint64_t stream;
  uint64_t submitted_ns;
  uint32_t cupti_ids[2];
  int32_t device;
  format::GpuActivityKind kind;
  bool accounted;  // timed by another backend (a library frame): its records are dropped
};

struct Orphan {
  std::vector<uint8_t> bytes;  // one record
  int cycles = 0;
};

struct Buffer {
  uint8_t* data;
  size_t valid;
};

struct TimingNote {
  format::GpuTimingSource source;
  const char* reason;
  uint64_t at_ns;
};

thread_local uint32_t t_driver_id = 0;
thread_local uint32_t t_runtime_id = 0;

std::atomic<State> g_state{State::kUnstarted};
std::once_flag g_start_once;
format::GpuTimingRequest g_requested = format::GpuTimingRequest::kAuto;
const CuptiLibrary* g_cupti = nullptr;
CUpti_SubscriberHandle g_subscriber = nullptr;
const CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                     CUPTI_ACTIVITY_KIND_MEMSET};

// Guards everything below (never held across a CUPTI call).
std::mutex g_mutex;
constinit LazyGlobal<std::vector<Pending>> g_incoming;  // queued by hooks, taken by the writer
size_t g_snapshot = 0;            // how many of g_incoming the writer may take this cycle
constinit LazyGlobal<std::vector<Buffer>> g_buffers;    // completed by CUPTI, parsed by the writer
constinit LazyGlobal<std::vector<TimingNote>> g_notes;
constinit LazyGlobal<std::unordered_map<uint64_t, uint64_t>> g_graph_nodes;  // CUPTI graphNodeId -> node handle

// Capture windows. CUPTI times all work, recorded or not; what a call made
// outside every window launched must not come back as work no hooked call
// made. CUPTI numbers calls in the order they are made, so the ids at which
// recording turned on or off cut them into ranges: on_api notes each such
// edge when it first sees the new state (a call racing the change on
// another thread may land on the wrong side of it).
struct WindowEdge {
  uint32_t first_id;  // the first call seen in this state
  bool recording;
};
constinit LazyGlobal<std::vector<WindowEdge>> g_window_edges;
std::atomic<int> g_recording_seen{-1};  // the state of the last edge; -1: none yet

// Owned by the writer thread.
constinit LazyGlobal<std::unordered_map<uint32_t, Pending>> g_waiting;  // CUPTI correlation id -> operation
constinit LazyGlobal<std::deque<Orphan>> g_orphans;
// (device, CUPTI streamId) -> the stream as the hooks recorded it, learned
// from joined records: unattributed work on a known stream goes on its track.
constinit LazyGlobal<std::unordered_map<uint64_t, uint64_t>> g_streams;
// What the writer spent on CUPTI's records (the verbose line at exit; the
// benchmark's parse rate).
uint64_t g_records_parsed = 0;
uint64_t g_parse_ns = 0;
uint64_t g_last_flush_ns = 0;
// Records of calls outside every capture window, dropped: how many, and
// their span (GPU times), reported at each cycle as a Lost record of reason
// kOutsideCaptureWindow.
uint64_t g_outside_count = 0, g_outside_first_ns = 0, g_outside_last_ns = 0;

uint64_t stream_key(int32_t device, uint32_t cupti_stream) {
  return (uint64_t(uint32_t(device)) << 32) | cupti_stream;
}

void note(format::GpuTimingSource source, const char* reason) {
  std::lock_guard lock(g_mutex);
  g_notes->push_back(TimingNote{source, reason, now_ns()});
}

// ---- CUPTI's callbacks

// An instantiated graph runs clones of its graph's nodes, and CUPTI's
// records name the clone (graphNodeId): on an H200 (CUPTI 13.0) no record of
// a graph launch matched a node of the graph that was instantiated. Each
// clone made at instantiation is mapped to the node it was cloned from, the
// one the GraphNode records describe.
void note_cloned_node(const CUpti_ResourceData* resource) {
  const auto* graph = resource != nullptr ? static_cast<const CUpti_GraphData*>(resource->resourceDescriptor) : nullptr;
  if (graph == nullptr || graph->node == nullptr || graph->originalNode == nullptr) return;
  uint64_t id = 0;
  if (g_cupti->graph_node_id(graph->node, &id) != CUPTI_SUCCESS || id == 0) return;
  std::lock_guard lock(g_mutex);
  (*g_graph_nodes)[id] = reinterpret_cast<uint64_t>(graph->originalNode);
}

void CUPTIAPI on_api(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) note_cloned_node(static_cast<const CUpti_ResourceData*>(data));
    return;
  }
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite != CUPTI_API_ENTER) return;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
    t_driver_id = info->correlationId;
  else if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
    t_runtime_id = info->correlationId;
  const int recording = runtime::recording() ? 1 : 0;
  if (g_recording_seen.load(std::memory_order_relaxed) != recording) {
    std::lock_guard lock(g_mutex);
    if (g_recording_seen.load(std::memory_order_relaxed) != recording) {
      g_window_edges->push_back(WindowEdge{info->correlationId, recording == 1});
      g_recording_seen.store(recording, std::memory_order_relaxed);
    }
  }
}

// Whether the call of CUPTI correlation id `id` was made outside every
// capture window (false when not known: before the first edge).
bool outside_windows(uint32_t id) {
  std::lock_guard lock(g_mutex);
  const std::vector<WindowEdge>& edges = *g_window_edges;
  auto after = std::upper_bound(edges.begin(), edges.end(), id,
                                [](uint32_t value, const WindowEdge& edge) { return value < edge.first_id; });
  if (after == edges.begin()) return false;
  return !std::prev(after)->recording;
}

// The ids on_api noted since the last take, cleared for the next call.
void take_noted_ids(uint32_t ids[2]) {
  ids[0] = t_driver_id;
  ids[1] = t_runtime_id;
  t_driver_id = 0;
  t_runtime_id = 0;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (buffer == nullptr) return;
  std::lock_guard lock(g_mutex);
  g_buffers->push_back(Buffer{buffer, valid});
}

// CLOCK_MONOTONIC ns, the trace's clock, for every CUPTI timestamp.
uint64_t CUPTIAPI timestamp() { return now_ns(); }

bool submits_work(CUpti_CallbackDomain domain, const char* name) {
  static const char* const kDriver[] = {"cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch"};
  static const char* const kRuntime[] = {"cudaLaunch", "__cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch"};
  if (name == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    for (const char* prefix : kDriver)
      if (std::strncmp(name, prefix, std::strlen(prefix)) == 0) return true;
  } else {
    for (const char* prefix : kRuntime)
      if (std::strncmp(name, prefix, std::strlen(prefix)) == 0) return true;
  }
  return false;
}

// Subscribes and enables what the backend needs; null on success, else why.
const char* start_cupti() {
  const char* why = nullptr;
  g_cupti = load_cupti(&why);
  if (g_cupti == nullptr) return why;
  const CuptiLibrary& c = *g_cupti;
  // CUPTI's worker threads wait for work inside libcupti: not the program's waits.
  osrt::exclude_library_of(reinterpret_cast<const void*>(c.subscribe));
  CUptiResult result = c.subscribe(&g_subscriber, on_api, nullptr);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) return "another CUPTI subscriber holds CUPTI";
  if (result != CUPTI_SUCCESS) return cupti_result_name(c, result);
  struct Range {
    CUpti_CallbackDomain domain;
    uint32_t size;
  };
  uint32_t enabled = 0;
  for (const Range range : {Range{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE},
                            Range{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE}}) {
    for (uint32_t cbid = 1; cbid < range.size; ++cbid) {
      const char* name = nullptr;
      if (c.callback_name(range.domain, cbid, &name) != CUPTI_SUCCESS || !submits_work(range.domain, name)) continue;
      if (c.enable_callback(1, g_subscriber, range.domain, cbid) == CUPTI_SUCCESS) ++enabled;
    }
  }
  if (enabled == 0) {
    c.unsubscribe(g_subscriber);
    return "CUPTI enabled no launch or copy callback";
  }
  // Without it graph launches are still timed, node by node, but not named.
  c.enable_callback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
  c.register_timestamp(timestamp);
  if ((result = c.register_callbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
    c.unsubscribe(g_subscriber);
    return cupti_result_name(c, result);
  }
  for (CUpti_ActivityKind kind : kKinds) {
    if ((result = c.activity_enable(kind)) != CUPTI_SUCCESS) {
      for (CUpti_ActivityKind k : kKinds) c.activity_disable(k);
      c.unsubscribe(g_subscriber);
      return cupti_result_name(c, result);
    }
  }
  return nullptr;
}

void fall_back(const char* why) {
  print_line("GPU timing: events (CUPTI not used: ", why, ")");
  note(format::GpuTimingSource::kEvents, why);
  use_gpu_timing_backend(event_timing_backend());
}

class CuptiTiming final : public GpuTimingBackend {
 public:
  TimingToken before(CUstream stream, CUcontext context, Submission submission, bool done_by_return) noexcept override {
    if (g_state.load(std::memory_order_acquire) != State::kRunning) {
      ensure_started();
      if (g_state.load(std::memory_order_acquire) != State::kRunning) {
        GpuTimingBackend* events = event_timing_backend();
        return events != nullptr ? events->before(stream, context, submission, done_by_return) : TimingToken{};
      }
    }
    t_driver_id = 0;
    t_runtime_id = 0;
    TimingToken token;
    token.owner = this;
    token.start = this;  // timed: the hooks call returned() and queue()
    token.submitted_ns = now_ns();
    return token;
  }

  void returned(TimingToken& token, CUstream, bool submitted) noexcept override {
    take_noted_ids(token.cupti_ids);
    if (!submitted) token.start = nullptr;
  }

  void queue(const TimingToken& token, const GpuOperation& op) noexcept override {
    if (token.start == nullptr || (token.cupti_ids[0] == 0 && token.cupti_ids[1] == 0)) {
      count_untimed_operation();  // no CUPTI id: its record cannot be joined
      return;
    }
    std::lock_guard lock(g_mutex);
    g_incoming->push_back(Pending{op.correlation_id, op.stream, token.submitted_ns,
                                 {token.cupti_ids[0], token.cupti_ids[1]}, op.device, op.kind, false});
  }

  void foreign_submission_begin() noexcept override {
    uint32_t stale[2];
    take_noted_ids(stale);
  }

  void foreign_submission_end(bool submitted) noexcept override {
    uint32_t ids[2];
    take_noted_ids(ids);
    if (!submitted || (ids[0] == 0 && ids[1] == 0)) return;
    std::lock_guard lock(g_mutex);
    g_incoming->push_back(Pending{0, 0, now_ns(), {ids[0], ids[1]}, 0, format::GpuActivityKind::kKernel, true});
  }

  void release(const TimingToken&) noexcept override {}
  void* lock_submissions(CUcontext, CUstream) noexcept override { return nullptr; }
  void unlock_submissions(void*) noexcept override {}
  void before_context_teardown(CUcontext) noexcept override {}
  void after_context_teardown(CUcontext, bool) noexcept override {}

  void before_graph_instantiate() noexcept override {
    if (g_state.load(std::memory_order_acquire) == State::kUnstarted) ensure_started();
  }

  void graph_node_recorded(CUgraphNode node) noexcept override {
    // A graph may be instantiated before the first timed operation.
    if (g_state.load(std::memory_order_acquire) == State::kUnstarted) ensure_started();
    if (g_state.load(std::memory_order_acquire) != State::kRunning || g_cupti == nullptr) return;
    uint64_t id = 0;
    if (g_cupti->graph_node_id(node, &id) != CUPTI_SUCCESS || id == 0) return;
    std::lock_guard lock(g_mutex);
    (*g_graph_nodes)[id] = reinterpret_cast<uint64_t>(node);
  }

  void ensure_started() noexcept {
    std::call_once(g_start_once, [] {
      if (g_state.load() != State::kUnstarted) return;  // the program took CUPTI first
      const char* why = start_cupti();
      if (why == nullptr) {
        g_state.store(State::kRunning, std::memory_order_release);
        note(format::GpuTimingSource::kCupti, "");
        return;
      }
      g_state.store(State::kFailed, std::memory_order_release);
      fall_back(why);
    });
  }
};

CuptiTiming g_backend;

// ---- the writer side

format::GpuActivityKind kind_of(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return format::GpuActivityKind::kKernel;
    case CUPTI_ACTIVITY_KIND_MEMCPY: return format::GpuActivityKind::kMemoryCopy;
    case CUPTI_ACTIVITY_KIND_MEMSET: return format::GpuActivityKind::kMemorySet;
    default: return format::GpuActivityKind{};
  }
}

size_t record_bytes(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET: return sizeof(CUpti_ActivityMemset4);
    default: return 0;
  }
}

struct Fields {
  uint64_t start, end, graph_node, bytes;
  uint32_t correlation, stream;
  int32_t device;
  const char* name;
};

Fields fields_of(const CUpti_Activity* record) {
  Fields f{};
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      const auto* r = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      f = Fields{r->start, r->end, r->graphNodeId, 0, r->correlationId, r->streamId, int32_t(r->deviceId), r->name};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      f = Fields{r->start, r->end, r->graphNodeId, r->bytes, r->correlationId, r->streamId, int32_t(r->deviceId), nullptr};
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* r = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      f = Fields{r->start, r->end, r->graphNodeId, r->bytes, r->correlationId, r->streamId, int32_t(r->deviceId), nullptr};
      break;
    }
    default:
      break;
  }
  return f;
}

uint64_t node_handle(uint64_t cupti_node) {
  if (cupti_node == 0) return 0;
  std::lock_guard lock(g_mutex);
  auto it = g_graph_nodes->find(cupti_node);
  return it != g_graph_nodes->end() ? it->second : 0;
}

// The operation's ids leave the waiting map (a copy: `op` may live there).
void forget(const Pending op) {
  for (uint32_t id : op.cupti_ids)
    if (id != 0) g_waiting->erase(id);
}

// Joins one record; false when its operation is not known (yet).
bool join(WriterRecordSink& sink, const CUpti_Activity* record) {
  const Fields f = fields_of(record);
  auto it = g_waiting->find(f.correlation);
  if (it == g_waiting->end()) return false;
  const Pending& op = it->second;
  if (op.accounted) {
    forget(op);  // its GPU time comes from the other backend
    return true;
  }
  g_streams->emplace(stream_key(f.device, f.stream), op.stream);
  format::GpuActivityRecord out{};
  out.header = format::header_for<format::GpuActivityRecord>();
  out.device = op.device;
  out.correlation_id = op.correlation_id;
  out.start_ns = f.start;
  out.end_ns = f.end < f.start ? f.start : f.end;
  out.stream = op.stream;
  out.source = static_cast<uint8_t>(format::GpuTimingSource::kCupti);
  if (op.kind == format::GpuActivityKind::kGraph) {
    // Each node of a graph launch: its own kind, joined to its node.
    out.kind = static_cast<uint8_t>(kind_of(record));
    out.graph_node = node_handle(f.graph_node);
  } else {
    out.kind = static_cast<uint8_t>(op.kind);
  }
  sink.append(&out, sizeof out);
  if (op.kind != format::GpuActivityKind::kGraph) forget(op);
  return true;
}

void emit_unattributed(WriterRecordSink& sink, const CUpti_Activity* record) {
  const Fields f = fields_of(record);
  if (outside_windows(f.correlation)) {
    // Launched while the hooks passed through: not in the trace, counted.
    if (g_outside_count++ == 0 || f.start < g_outside_first_ns) g_outside_first_ns = f.start;
    g_outside_last_ns = std::max(g_outside_last_ns, f.end);
    return;
  }
  format::UnattributedGpuWorkRecord out{};
  out.header = format::header_for<format::UnattributedGpuWorkRecord>();
  out.device = f.device;
  out.kind = static_cast<uint8_t>(kind_of(record));
  out.source = static_cast<uint8_t>(format::GpuTimingSource::kCupti);
  out.name_string = f.name != nullptr ? intern_string(f.name) : 0;
  auto known = g_streams->find(stream_key(f.device, f.stream));
  if (known != g_streams->end()) {
    out.stream = known->second;
    out.flags = format::kUnattributedStreamKnown;
  } else {
    out.stream = f.stream;
  }
  out.start_ns = f.start;
  out.end_ns = f.end < f.start ? f.start : f.end;
  out.bytes = f.bytes;
  sink.append(&out, sizeof out);
}

void emit_lost(WriterRecordSink& sink, format::LostReason reason, uint64_t count, uint64_t first_ns, uint64_t last_ns) {
  if (count == 0) return;
  format::LostRecord lost{};
  lost.header = format::header_for<format::LostRecord>();
  lost.reason = static_cast<uint32_t>(reason);
  lost.first_ns = first_ns;
  lost.last_ns = last_ns;
  lost.count = count;
  sink.append(&lost, sizeof lost);
}

void before_drain() noexcept {
  std::lock_guard lock(g_mutex);
  g_snapshot = g_incoming->size();
}

void run(WriterRecordSink& sink, bool final) noexcept {
  std::vector<TimingNote> notes;
  std::vector<Pending> incoming;
  {
    std::lock_guard lock(g_mutex);
    notes.swap(*g_notes);
    incoming.assign(g_incoming->begin(), g_incoming->begin() + std::ptrdiff_t(g_snapshot));
    g_incoming->erase(g_incoming->begin(), g_incoming->begin() + std::ptrdiff_t(g_snapshot));
    g_snapshot = 0;
  }
  for (const TimingNote& n : notes) {
    format::GpuTimingInfoRecord info{};
    info.header = format::header_for<format::GpuTimingInfoRecord>();
    info.source = static_cast<uint8_t>(n.source);
    info.requested = static_cast<uint8_t>(g_requested);
    info.reason_string = intern_string(n.reason);
    info.at_ns = n.at_ns;
    sink.append(&info, sizeof info);
  }
  for (const Pending& op : incoming)
    for (uint32_t id : op.cupti_ids)
      if (id != 0) (*g_waiting)[id] = op;
  const State state = g_state.load(std::memory_order_acquire);
  // The state first: its release store (after start_cupti set g_cupti) is what
  // makes g_cupti safe to read on this thread (TSan reported the other order).
  if ((state != State::kRunning && state != State::kYielded) || g_cupti == nullptr) return;
  // CUPTI is called from here only, never under g_mutex.
  const uint64_t now = now_ns();
  if (state == State::kRunning && (final || now - g_last_flush_ns >= kFlushEveryNs)) {
    g_cupti->flush_all(final ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
    g_last_flush_ns = now;
    size_t dropped = 0;
    if (g_cupti->dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS)
      emit_lost(sink, format::LostReason::kGpuTimingDropped, dropped, now, now);
  }
  std::vector<Buffer> buffers;
  {
    std::lock_guard lock(g_mutex);
    buffers.swap(*g_buffers);
  }
  const uint64_t parse_start = now_ns();
  // Records that waited for their operation go first, in arrival order.
  for (auto it = g_orphans->begin(); it != g_orphans->end();) {
    const auto* record = reinterpret_cast<const CUpti_Activity*>(it->bytes.data());
    if (join(sink, record)) {
      it = g_orphans->erase(it);
    } else if (++it->cycles >= kOrphanCycles || final) {
      emit_unattributed(sink, record);
      it = g_orphans->erase(it);
    } else {
      ++it;
    }
  }
  for (const Buffer& buffer : buffers) {
    CUpti_Activity* record = nullptr;
    while (g_cupti->next_record(buffer.data, buffer.valid, &record) == CUPTI_SUCCESS) {
      ++g_records_parsed;
      const size_t bytes = record_bytes(record);
      if (bytes == 0 || join(sink, record)) continue;
      if (final) {
        emit_unattributed(sink, record);
      } else {
        Orphan orphan;
        orphan.bytes.assign(reinterpret_cast<const uint8_t*>(record), reinterpret_cast<const uint8_t*>(record) + bytes);
        g_orphans->push_back(std::move(orphan));
      }
    }
    std::free(buffer.data);
  }
  g_parse_ns += now_ns() - parse_start;
  emit_lost(sink, format::LostReason::kOutsideCaptureWindow, g_outside_count, g_outside_first_ns, g_outside_last_ns);
  g_outside_count = 0;
  if (final && runtime::config().verbose && g_records_parsed > 0) {
    char line[160];
    std::snprintf(line, sizeof line, "CUPTI: %llu activity records parsed in %.3f ms (%.2f M records/s)",
                  static_cast<unsigned long long>(g_records_parsed), double(g_parse_ns) / 1e6,
                  g_parse_ns > 0 ? double(g_records_parsed) * 1e3 / double(g_parse_ns) : 0.0);
    print_line(line);
  }
  if (final) {
    // Operations whose record never came (graph launches are complete
    // once their nodes came: they stay in the map until now).
    uint64_t count = 0, first = 0, last = 0;
    for (const auto& [id, op] : *g_waiting) {
      if (op.accounted || op.kind == format::GpuActivityKind::kGraph || (op.cupti_ids[0] != 0 && id != op.cupti_ids[0]))
        continue;
      if (count++ == 0 || op.submitted_ns < first) first = op.submitted_ns;
      if (op.submitted_ns > last) last = op.submitted_ns;
    }
    emit_lost(sink, format::LostReason::kGpuTimingUnresolved, count, first, last);
    g_waiting->clear();
  }
}

void reset_in_child() noexcept {
  // CUPTI does not follow a fork: the child times its work with events.
  new (&g_mutex) std::mutex();
  restart_after_fork(*g_incoming);
  restart_after_fork(*g_buffers);
  restart_after_fork(*g_notes);
  restart_after_fork(*g_waiting);
  restart_after_fork(*g_orphans);
  restart_after_fork(*g_streams);
  restart_after_fork(*g_window_edges);
  g_recording_seen.store(-1);
  if (g_state.load() == State::kRunning) {
    g_state.store(State::kYielded);
    note(format::GpuTimingSource::kEvents, "CUPTI does not follow fork: the child uses events");
    use_gpu_timing_backend(event_timing_backend());
  }
}

const WriterTask kTask{before_drain, run, reset_in_child};

}  // namespace

GpuTimingBackend* cupti_timing_backend(format::GpuTimingRequest requested) noexcept {
  static const bool registered = writer_register_task(&kTask);
  if (!registered || event_timing_backend() == nullptr) return nullptr;
  g_requested = requested;
  return &g_backend;
}

void start_cupti_timing() noexcept {
  if (gpu_timing_backend_is(&g_backend)) g_backend.ensure_started();
}

bool cupti_yield_to_program(const char* what) noexcept {
  State expected = State::kUnstarted;
  if (g_state.compare_exchange_strong(expected, State::kYielded)) {
    // Not started yet: it never will be.
    if (gpu_timing_backend_is(&g_backend)) {
      print_line("GPU timing: events (the program uses CUPTI itself: ", what, ")");
      note(format::GpuTimingSource::kEvents, "the program uses CUPTI itself");
      use_gpu_timing_backend(event_timing_backend());
    }
    return true;
  }
  if (expected != State::kRunning) return expected == State::kYielded || expected == State::kFailed;
  if (!g_state.compare_exchange_strong(expected, State::kYielded)) return true;
  // New operations go to events from now on; then CUPTI's records of the
  // work already done are taken and CUPTI is left as the program would find it.
  use_gpu_timing_backend(event_timing_backend());
  print_line("GPU timing: events from now on (the program uses CUPTI itself: ", what, ")");
  note(format::GpuTimingSource::kEvents, "the program uses CUPTI itself");
  const CuptiLibrary& c = *g_cupti;
  for (CUpti_ActivityKind kind : kKinds) c.activity_disable(kind);
  c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  c.unsubscribe(g_subscriber);
  c.register_timestamp(nullptr);
  // Parse what the flush handed back while the program sets CUPTI up.
  writer_flush_and_wait(FlushGoal::kFlush, 2000);
  return true;
}

}  // namespace proflaunch::cuda
