#include "tools.h"

#include "api_guard.h"
#include "capture.h"
#include "clock.h"
#include "context.h"
#include "driver_state.h"
#include "memory_registry.h"
#include "module.h"
#include "stream.h"

namespace simgpu::tools {

std::atomic<SimgpuToolsApiCallback> g_api_callback{nullptr};

namespace {

std::atomic<void*> g_api_user{nullptr};
std::atomic<SimgpuToolsWorkCallback> g_work_callback{nullptr};
std::atomic<void*> g_work_user{nullptr};
std::atomic<SimgpuToolsResourceCallback> g_resource_callback{nullptr};
std::atomic<void*> g_resource_user{nullptr};
std::atomic<uint32_t> g_next_correlation{1};

// Correlation ids are assigned per outermost call, traced or not, so that a
// tool attaching later never sees an id twice.
thread_local uint32_t t_depth = 0;
thread_local uint32_t t_correlation = 0;

uint32_t enter_correlation(bool& outermost) noexcept {
  outermost = t_depth++ == 0;
  if (outermost) t_correlation = g_next_correlation.fetch_add(1, std::memory_order_relaxed);
  return t_correlation;
}

void leave_correlation(bool outermost) noexcept {
  if (t_depth > 0) --t_depth;
  if (outermost) t_correlation = 0;
}

void set_api_callback(SimgpuToolsApiCallback callback, void* user) {
  g_api_user.store(user);
  g_api_callback.store(callback);
}
void set_work_callback(SimgpuToolsWorkCallback callback, void* user) {
  g_work_user.store(user);
  g_work_callback.store(callback);
}
std::atomic<SimgpuToolsMemoryCallback> g_memory_callback{nullptr};
std::atomic<void*> g_memory_user{nullptr};
void set_memory_callback(SimgpuToolsMemoryCallback callback, void* user) {
  g_memory_user.store(user);
  g_memory_callback.store(callback);
}
void set_resource_callback(SimgpuToolsResourceCallback callback, void* user) {
  g_resource_user.store(user);
  g_resource_callback.store(callback);
}
std::atomic<SimgpuToolsGraphCallback> g_graph_callback{nullptr};
std::atomic<void*> g_graph_user{nullptr};
void set_graph_callback(SimgpuToolsGraphCallback callback, void* user) {
  g_graph_user.store(user);
  g_graph_callback.store(callback);
}

// The runtime's calls: the scope lives in the runtime's entry point, so its
// state travels through the user slot (a heap-free encoding: the outermost
// flag in bit 0 of a pointer-sized slot the runtime keeps).
struct RuntimeSlot {
  void* tool_slot;
  uint64_t start_ns;
  uint32_t correlation;
  bool outermost;
};
thread_local RuntimeSlot t_runtime_slots[16];
thread_local uint32_t t_runtime_depth = 0;

uint32_t runtime_enter(const char* name, void** user_slot) {
  bool outermost = false;
  const uint32_t correlation = enter_correlation(outermost);
  RuntimeSlot* slot = t_runtime_depth < 16 ? &t_runtime_slots[t_runtime_depth] : nullptr;
  ++t_runtime_depth;
  if (user_slot != nullptr) *user_slot = slot;
  if (slot == nullptr) return correlation;
  slot->tool_slot = nullptr;
  slot->correlation = correlation;
  slot->outermost = outermost;
  slot->start_ns = uint64_t(monotonic_now_ns());
  if (SimgpuToolsApiCallback callback = g_api_callback.load(std::memory_order_acquire)) {
    SimgpuToolsApiCall call{};
    call.domain = SIMGPU_TOOLS_RUNTIME;
    call.site = SIMGPU_TOOLS_ENTER;
    call.name = name;
    call.correlation_id = correlation;
    call.context = current_context();
    call.start_ns = slot->start_ns;
    callback(g_api_user.load(std::memory_order_relaxed), &call);
    slot->tool_slot = call.user_slot;
  }
  return correlation;
}

void runtime_exit(const char* name, int result, void* user_slot) {
  auto* slot = static_cast<RuntimeSlot*>(user_slot);
  if (t_runtime_depth > 0) --t_runtime_depth;
  bool outermost = slot != nullptr ? slot->outermost : false;
  if (slot != nullptr) {
    if (SimgpuToolsApiCallback callback = g_api_callback.load(std::memory_order_acquire)) {
      SimgpuToolsApiCall call{};
      call.domain = SIMGPU_TOOLS_RUNTIME;
      call.site = SIMGPU_TOOLS_EXIT;
      call.name = name;
      call.correlation_id = slot->correlation;
      call.result = result;
      call.context = current_context();
      call.start_ns = slot->start_ns;
      call.end_ns = uint64_t(monotonic_now_ns());
      call.user_slot = slot->tool_slot;
      callback(g_api_user.load(std::memory_order_relaxed), &call);
    }
  }
  leave_correlation(outermost);
}

uint32_t context_id(CUcontext context) {
  if (context == nullptr || driver_ready() != CUDA_SUCCESS || !state().contexts.contains(context)) return 0;
  return uint32_t(context->id);
}
uint32_t stream_id(CUstream stream) {
  if (driver_ready() != CUDA_SUCCESS) return 0;
  CUstream_st* resolved = nullptr;
  if (resolve_stream(stream, NullStream::kLegacy, resolved) != CUDA_SUCCESS || resolved == nullptr) return 0;
  return uint32_t(resolved->id);
}
uint32_t graph_id(CUgraph graph) {
  if (graph == nullptr || driver_ready() != CUDA_SUCCESS) return 0;
  std::lock_guard lock(capture_mutex());
  return state().graphs.contains(graph) ? graph->tools_id : 0;
}
uint64_t graph_node_id(CUgraphNode node) {
  if (node == nullptr || driver_ready() != CUDA_SUCCESS) return 0;
  std::lock_guard lock(capture_mutex());
  return graph_node_known_locked(node) || graph_node_clone_known_locked(node) ? node->tools_id : 0;
}
uint32_t last_correlation_id() { return g_next_correlation.load() - 1; }

const SimgpuToolsInterface kInterface{
    SIMGPU_TOOLS_VERSION, sizeof(SimgpuToolsInterface), set_api_callback, set_work_callback, set_resource_callback,
    runtime_enter,        runtime_exit,                 context_id,       stream_id,         graph_id,
    graph_node_id,        last_correlation_id,          set_memory_callback,  set_graph_callback,
};

int memory_kind(uint8_t kind) { return kind == 0 ? int(SIMGPU_TOOLS_PAGEABLE) : int(kind); }

}  // namespace

uint32_t current_correlation_id() noexcept { return t_correlation; }

ApiScope::ApiScope(int domain, const char* name) noexcept {
  call_.correlation_id = enter_correlation(outermost_);
  callback_ = g_api_callback.load(std::memory_order_acquire);
  if (callback_ == nullptr) return;
  call_.domain = domain;
  call_.site = SIMGPU_TOOLS_ENTER;
  call_.name = name;
  call_.context = driver_ready() == CUDA_SUCCESS ? current_context() : nullptr;
  call_.start_ns = uint64_t(monotonic_now_ns());
  callback_(g_api_user.load(std::memory_order_relaxed), &call_);
}

void ApiScope::exit(int result) noexcept {
  if (callback_ != nullptr) {
    call_.site = SIMGPU_TOOLS_EXIT;
    call_.result = result;
    call_.end_ns = uint64_t(monotonic_now_ns());
    callback_(g_api_user.load(std::memory_order_relaxed), &call_);
  }
  leave_correlation(outermost_);
}

void work_completed(const StreamOperation& op, CUstream_st* stream, int64_t start_ns, int64_t end_ns) noexcept {
  SimgpuToolsWorkCallback callback = g_work_callback.load(std::memory_order_acquire);
  if (callback == nullptr) return;
  SimgpuToolsWork work{};
  switch (op.node.type) {
    case CU_GRAPH_NODE_TYPE_KERNEL: work.kind = SIMGPU_TOOLS_KERNEL; break;
    case CU_GRAPH_NODE_TYPE_MEMCPY: work.kind = SIMGPU_TOOLS_MEMCPY; break;
    case CU_GRAPH_NODE_TYPE_MEMSET: work.kind = SIMGPU_TOOLS_MEMSET; break;
    default: return;  // host functions, markers, waits, allocations: no device work
  }
  work.correlation_id = op.tools.correlation_id;
  work.start_ns = uint64_t(start_ns);
  work.end_ns = uint64_t(end_ns);
  work.device = stream->context->device != nullptr ? stream->context->device->ordinal : 0;
  work.context_id = uint32_t(stream->context->id);
  work.stream_id = uint32_t(stream->id);
  work.graph_id = op.tools.graph_id;
  work.graph_node_id = op.tools.graph_node_id;
  if (work.kind == SIMGPU_TOOLS_KERNEL && op.node.function != nullptr) {
    const KernelInfo& info = op.node.function->info;
    work.name = info.name.c_str();
    work.static_shared_bytes = info.static_shared_bytes;
    work.registers = info.registers;
  }
  for (int i = 0; i < 3; ++i) {
    work.grid[i] = op.node.grid[i];
    work.block[i] = op.node.block[i];
  }
  work.dynamic_shared_bytes = op.node.shared_bytes;
  work.bytes = op.node.bytes;
  work.copy_kind = op.tools.copy_kind;
  work.src_kind = memory_kind(op.tools.src_kind);
  work.dst_kind = memory_kind(op.tools.dst_kind);
  callback(g_work_user.load(std::memory_order_relaxed), &work);
}

void graph_node_cloned(CUcontext context, CUgraphExec exec, CUgraph original_graph, CUgraphNode node,
                       CUgraphNode original, CUgraphNodeType type) noexcept {
  if (SimgpuToolsGraphCallback callback = g_graph_callback.load(std::memory_order_acquire))
    callback(g_graph_user.load(std::memory_order_relaxed), context, exec, original_graph, node, original, type);
}

void resource(int event, CUcontext context, CUstream stream) noexcept {
  if (SimgpuToolsResourceCallback callback = g_resource_callback.load(std::memory_order_acquire))
    callback(g_resource_user.load(std::memory_order_relaxed), event, context, stream);
}

void memory(int event, const MemoryRange& range) noexcept {
  SimgpuToolsMemoryCallback callback = g_memory_callback.load(std::memory_order_acquire);
  if (callback == nullptr) return;
  SimgpuToolsMemory m{};
  switch (range.kind) {
    case MemoryKind::kDevice: m.kind = SIMGPU_TOOLS_DEVICE; break;
    case MemoryKind::kManaged: m.kind = SIMGPU_TOOLS_MANAGED; break;
    case MemoryKind::kPoolBlock: m.kind = SIMGPU_TOOLS_DEVICE; m.is_async = 1; break;
    case MemoryKind::kPinnedHost: m.kind = SIMGPU_TOOLS_PINNED; break;
    default: return;  // registered host memory, VMM mappings, module globals
  }
  m.event = event;
  m.address = range.base;
  m.bytes = range.bytes;
  m.timestamp_ns = uint64_t(monotonic_now_ns());
  m.device = range.device;
  m.context_id = range.context != nullptr ? uint32_t(range.context->id) : 0;
  m.correlation_id = t_correlation;
  m.pool = reinterpret_cast<uintptr_t>(range.pool);
  callback(g_memory_user.load(std::memory_order_relaxed), &m);
}

}  // namespace simgpu::tools

extern "C" int simgpuGetToolsInterface(uint32_t version, const SimgpuToolsInterface** out) {
  if (out == nullptr || version == 0 || version > SIMGPU_TOOLS_VERSION) return -1;
  *out = &simgpu::tools::kInterface;
  return 0;
}
