// The simulated libcupti.so.13: the Activity and Callback APIs over the
// simulated driver's tools interface (simgpu_tools.h). Built against the real
// CUPTI 13 headers, so every record and enum is the real one. What it does
// where the documentation is silent is written in ../README.md.
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "simgpu_tools.h"

namespace {

struct CbidRow {
  const char* name;
  uint32_t cbid;
};
#include "cupti_cbid_table.inc"

template <size_t N>
uint32_t find_cbid(const CbidRow (&rows)[N], const char* name) {
  const CbidRow* end = rows + N;
  const CbidRow* it =
      std::lower_bound(rows, end, name, [](const CbidRow& row, const char* n) { return std::strcmp(row.name, n) < 0; });
  return it != end && std::strcmp(it->name, name) == 0 ? it->cbid : 0;
}

uint64_t clock_ns(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// ---- state

constexpr size_t kKinds = 64;  // covers every CUpti_ActivityKind this library records

struct Subscriber {
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::string name;
  std::unordered_set<uint64_t> enabled;  // (domain << 32) | cbid
  bool domain_enabled[CUPTI_CB_DOMAIN_SIZE] = {};
};

struct Record {
  std::vector<uint8_t> bytes;  // one activity record, already in its final layout
};

struct State {
  std::mutex mutex;  // everything below
  const SimgpuToolsInterface* driver = nullptr;
  Subscriber* subscriber = nullptr;
  std::atomic<bool> kind_enabled[kKinds] = {};
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::atomic<CUpti_TimestampCallbackFunc> timestamp{nullptr};
  // The driver-to-tool clock offset, measured once per timestamp source
  // (clock_map).
  std::mutex clock_mutex;
  bool clock_offset_known = false;
  CUpti_TimestampCallbackFunc clock_offset_for = nullptr;
  int64_t clock_offset = 0;
  size_t device_buffer_size = 8 << 20;
  size_t pool_limit = 250;
  uint64_t dropped = 0;

  // Records wait here until the delivery thread writes them into a buffer.
  std::deque<Record> pending;
  std::condition_variable wake;
  std::condition_variable delivered;
  uint64_t flush_requests = 0;
  uint64_t flushes_done = 0;
  bool thread_started = false;
  std::thread::id delivery_thread;

  // The buffer being filled (owned by the delivery thread).
  uint8_t* buffer = nullptr;
  size_t buffer_size = 0;
  size_t buffer_used = 0;
};

State* g_state = nullptr;

// A forked child has no delivery thread, and the records waiting in its copy
// of the state are the parent's (the parent delivers them). It starts over
// with what the parent set up (subscriber, callbacks, enabled kinds) and no
// thread until it records something. A lock the parent's threads held at
// the fork is rebuilt, not waited for.
void after_fork_in_child() {
  State& s = *g_state;
  new (&s.mutex) std::mutex();
  new (&s.clock_mutex) std::mutex();
  new (&s.wake) std::condition_variable();
  new (&s.delivered) std::condition_variable();
  new (&s.pending) std::deque<Record>();
  s.thread_started = false;
  s.delivery_thread = std::thread::id();
  s.flush_requests = s.flushes_done = 0;
  s.buffer = nullptr;
  s.buffer_size = s.buffer_used = 0;
}

State& state() {
  static State* s = [] {
    g_state = new State;  // never destroyed: the delivery thread outlives static destructors
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    return g_state;
  }();
  return *s;
}

thread_local std::vector<uint64_t> t_external[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
thread_local CUptiResult t_last_error = CUPTI_SUCCESS;

CUptiResult fail(CUptiResult result) {
  t_last_error = result;
  return result;
}

// Converts a driver time (CLOCK_MONOTONIC) to the clock the tool sees: the
// registered timestamp callback's, or by default CLOCK_REALTIME (the real
// library does not promise CLOCK_MONOTONIC either).
struct ClockMap {
  int64_t offset;
  uint64_t to_tool(uint64_t monotonic) const { return uint64_t(int64_t(monotonic) + offset); }
};

// The offset is measured once per timestamp source, as one calibration
// serves every record of the real library, whose GPU timestamps keep their
// order on a stream. Measured per record (before issue 40, item 11), each
// record had its own offset, off by the time between the two clock reads
// (microseconds on a loaded machine), so a kernel could be reported
// starting before the copy ahead of it on its stream ended.
ClockMap clock_map() {
  State& s = state();
  const CUpti_TimestampCallbackFunc callback = s.timestamp.load();
  std::lock_guard lock(s.clock_mutex);
  if (!s.clock_offset_known || s.clock_offset_for != callback) {
    // The tool's clock read between two driver reads; the narrowest of a
    // few brackets gives the offset to within its width.
    int64_t best_width = std::numeric_limits<int64_t>::max();
    for (int attempt = 0; attempt < 5; ++attempt) {
      const int64_t before = int64_t(clock_ns(CLOCK_MONOTONIC));
      const int64_t tool = int64_t(callback != nullptr ? callback() : clock_ns(CLOCK_REALTIME));
      const int64_t after = int64_t(clock_ns(CLOCK_MONOTONIC));
      if (after - before < best_width) {
        best_width = after - before;
        s.clock_offset = tool - (before + (after - before) / 2);
      }
    }
    s.clock_offset_for = callback;
    s.clock_offset_known = true;
  }
  return ClockMap{s.clock_offset};
}

bool enabled(CUpti_ActivityKind kind) { return size_t(kind) < kKinds && state().kind_enabled[kind].load(); }

void ensure_delivery_thread_locked(State& s);

template <typename T>
void push_record(const T& record) {
  State& s = state();
  Record r;
  r.bytes.resize(sizeof(T));
  std::memcpy(r.bytes.data(), &record, sizeof(T));
  std::lock_guard lock(s.mutex);
  if (s.request == nullptr) {
    ++s.dropped;
    return;
  }
  ensure_delivery_thread_locked(s);
  s.pending.push_back(std::move(r));
  // A buffer's worth waiting: wake the delivery thread to fill and hand one back.
  if (s.pending.size() * sizeof(T) >= s.device_buffer_size / 2) s.wake.notify_one();
}

// ---- delivery (the library's own thread)

size_t record_size(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return sizeof(CUpti_ActivityAPI);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      return sizeof(CUpti_ActivityExternalCorrelation);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return sizeof(CUpti_ActivitySynchronization2);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return sizeof(CUpti_ActivityMemory4);
    default:
      return 0;
  }
}

// Hands the buffer being filled back to the tool, without holding the lock
// across its callback. Called on the delivery thread.
void hand_back(State& s, std::unique_lock<std::mutex>& lock) {
  uint8_t* buffer = s.buffer;
  const size_t size = s.buffer_size, used = s.buffer_used;
  s.buffer = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = s.complete;
  lock.unlock();
  if (buffer != nullptr && complete != nullptr) complete(nullptr, 0, buffer, size, used);
  lock.lock();
}

// Writes pending records into buffers; a full buffer goes back at once; with
// `flush`, the partly filled one too. Called on the delivery thread.
void deliver(State& s, std::unique_lock<std::mutex>& lock, bool flush) {
  while (!s.pending.empty()) {
    Record record = std::move(s.pending.front());
    s.pending.pop_front();
    if (s.buffer != nullptr && s.buffer_used + record.bytes.size() > s.buffer_size) hand_back(s, lock);
    if (s.buffer == nullptr) {
      CUpti_BuffersCallbackRequestFunc request = s.request;
      uint8_t* buffer = nullptr;
      size_t size = 0, max_records = 0;
      lock.unlock();
      if (request != nullptr) request(&buffer, &size, &max_records);
      lock.lock();
      // Documented: a buffer must be 8-byte aligned; a NULL or too small
      // buffer means the records are dropped.
      if (buffer == nullptr || size < record.bytes.size() || (reinterpret_cast<uintptr_t>(buffer) & 7) != 0) {
        ++s.dropped;
        continue;
      }
      s.buffer = buffer;
      s.buffer_size = size;
      s.buffer_used = 0;
    }
    std::memcpy(s.buffer + s.buffer_used, record.bytes.data(), record.bytes.size());
    s.buffer_used += record.bytes.size();
  }
  if (flush && s.buffer != nullptr) hand_back(s, lock);
}

void delivery_loop() {
  State& s = state();
  std::unique_lock lock(s.mutex);
  for (;;) {
    s.wake.wait_for(lock, std::chrono::milliseconds(50));
    const uint64_t requests = s.flush_requests;
    const bool flush = requests != s.flushes_done;
    deliver(s, lock, flush);
    if (flush) {
      s.flushes_done = requests;
      s.delivered.notify_all();
    }
  }
}

void ensure_delivery_thread_locked(State& s) {
  if (s.thread_started) return;
  s.thread_started = true;
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::thread thread(delivery_loop);
  s.delivery_thread = thread.get_id();
  thread.detach();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

// Every record written so far is in a buffer handed back when this returns.
void flush_all() {
  State& s = state();
  std::unique_lock lock(s.mutex);
  if (!s.thread_started) return;
  if (std::this_thread::get_id() == s.delivery_thread) {  // from inside a buffer callback
    deliver(s, lock, true);
    return;
  }
  const uint64_t ticket = ++s.flush_requests;
  s.wake.notify_one();
  s.delivered.wait_for(lock, std::chrono::seconds(5), [&] { return s.flushes_done >= ticket; });
}

// ---- from the driver

CUpti_ActivityMemcpyKind memcpy_kind(int kind) {
  switch (kind) {
    case SIMGPU_TOOLS_COPY_HTOD: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    case SIMGPU_TOOLS_COPY_DTOH: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    case SIMGPU_TOOLS_COPY_DTOD: return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    case SIMGPU_TOOLS_COPY_HTOH: return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
    case SIMGPU_TOOLS_COPY_PTOP: return CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    default: return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
  }
}

CUpti_ActivityMemoryKind memory_kind(int kind) {
  switch (kind) {
    case SIMGPU_TOOLS_PAGEABLE: return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    case SIMGPU_TOOLS_PINNED: return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    case SIMGPU_TOOLS_DEVICE: return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    default: return CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
  }
}

void on_work(void*, const SimgpuToolsWork* work) {
  const ClockMap map = clock_map();
  if (work->kind == SIMGPU_TOOLS_KERNEL) {
    if (!enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) && !enabled(CUPTI_ACTIVITY_KIND_KERNEL)) return;
    CUpti_ActivityKernel10 r{};
    r.kind = enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
                                                             : CUPTI_ACTIVITY_KIND_KERNEL;
    r.registersPerThread = uint16_t(work->registers);
    r.start = map.to_tool(work->start_ns);
    r.end = map.to_tool(work->end_ns);
    r.completed = r.end;
    r.deviceId = uint32_t(work->device);
    r.contextId = work->context_id;
    r.streamId = work->stream_id;
    r.gridX = int32_t(work->grid[0]);
    r.gridY = int32_t(work->grid[1]);
    r.gridZ = int32_t(work->grid[2]);
    r.blockX = int32_t(work->block[0]);
    r.blockY = int32_t(work->block[1]);
    r.blockZ = int32_t(work->block[2]);
    r.staticSharedMemory = int32_t(work->static_shared_bytes);
    r.dynamicSharedMemory = int32_t(work->dynamic_shared_bytes);
    r.correlationId = work->correlation_id;
    // Names stay valid for the life of the process (the real library's do
    // while the module is loaded).
    static std::mutex names_mutex;
    static auto* names = new std::unordered_set<std::string>;
    {
      std::lock_guard lock(names_mutex);
      r.name = names->insert(work->name != nullptr ? work->name : "").first->c_str();
    }
    r.graphNodeId = work->graph_node_id;
    r.graphId = work->graph_id;
    r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    push_record(r);
  } else if (work->kind == SIMGPU_TOOLS_MEMCPY) {
    if (!enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) return;
    CUpti_ActivityMemcpy6 r{};
    r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    r.copyKind = uint8_t(memcpy_kind(work->copy_kind));
    r.srcKind = uint8_t(memory_kind(work->src_kind));
    r.dstKind = uint8_t(memory_kind(work->dst_kind));
    r.bytes = work->bytes;
    r.start = map.to_tool(work->start_ns);
    r.end = map.to_tool(work->end_ns);
    r.deviceId = uint32_t(work->device);
    r.contextId = work->context_id;
    r.streamId = work->stream_id;
    r.correlationId = work->correlation_id;
    r.runtimeCorrelationId = work->correlation_id;
    r.graphNodeId = work->graph_node_id;
    r.graphId = work->graph_id;
    r.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    r.copyCount = 1;
    push_record(r);
  } else if (work->kind == SIMGPU_TOOLS_MEMSET) {
    if (!enabled(CUPTI_ACTIVITY_KIND_MEMSET)) return;
    CUpti_ActivityMemset4 r{};
    r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    r.bytes = work->bytes;
    r.start = map.to_tool(work->start_ns);
    r.end = map.to_tool(work->end_ns);
    r.deviceId = uint32_t(work->device);
    r.contextId = work->context_id;
    r.streamId = work->stream_id;
    r.correlationId = work->correlation_id;
    r.memoryKind = uint16_t(memory_kind(work->dst_kind));
    r.graphNodeId = work->graph_node_id;
    r.graphId = work->graph_id;
    r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    push_record(r);
  }
}

// MEMORY2: each allocation and release as the driver reports it.
void on_memory(void*, const SimgpuToolsMemory* memory) {
  if (!enabled(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  CUpti_ActivityMemory4 r{};
  r.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  r.memoryOperationType = memory->event == SIMGPU_TOOLS_MEMORY_ALLOCATED ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                                                          : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  switch (memory->kind) {
    case SIMGPU_TOOLS_DEVICE: r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE; break;
    case SIMGPU_TOOLS_MANAGED: r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED; break;
    case SIMGPU_TOOLS_PINNED: r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED; break;
    default: r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN; break;
  }
  r.correlationId = memory->correlation_id;
  r.address = memory->address;
  r.bytes = memory->bytes;
  r.timestamp = clock_map().to_tool(memory->timestamp_ns);
  r.processId = uint32_t(getpid());
  r.deviceId = memory->device < 0 ? 0 : uint32_t(memory->device);
  r.contextId = memory->context_id;
  r.isAsync = uint32_t(memory->is_async);
  if (memory->is_async) {
    r.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    r.memoryPoolConfig.address = memory->pool;
  }
  push_record(r);
}

CUpti_ActivitySynchronizationType sync_type(const char* name) {
  if (std::strncmp(name, "cuStreamSynchronize", 19) == 0) return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  if (std::strncmp(name, "cuCtxSynchronize", 16) == 0) return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  if (std::strncmp(name, "cuEventSynchronize", 18) == 0) return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE;
  if (std::strncmp(name, "cuStreamWaitEvent", 17) == 0) return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  return CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN;
}

uint32_t thread_id() { return uint32_t(syscall(SYS_gettid)); }

void on_api(void*, SimgpuToolsApiCall* call) {
  const bool driver = call->domain == SIMGPU_TOOLS_DRIVER;
  const CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
  const uint32_t cbid = driver ? find_cbid(kDriverCbids, call->name) : find_cbid(kRuntimeCbids, call->name);
  State& s = state();
  // Callback API: the subscriber's callback, on the calling thread.
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard lock(s.mutex);
    if (Subscriber* sub = s.subscriber; sub != nullptr && cbid != 0 &&
                                        (sub->domain_enabled[domain] || sub->enabled.count((uint64_t(domain) << 32) | cbid))) {
      callback = sub->callback;
      userdata = sub->userdata;
    }
  }
  if (callback != nullptr) {
    CUpti_CallbackData data{};
    data.callbackSite = call->site == SIMGPU_TOOLS_ENTER ? CUPTI_API_ENTER : CUPTI_API_EXIT;
    data.functionName = call->name;
    data.functionParams = nullptr;  // the simulator has no parameter structures (README)
    int result = call->result;
    data.functionReturnValue = call->site == SIMGPU_TOOLS_EXIT ? &result : nullptr;
    data.context = call->context;
    data.contextUid = s.driver != nullptr ? s.driver->context_id(call->context) : 0;
    data.correlationId = call->correlation_id;
    // correlationData lives from entry to exit of the call: the user slot.
    data.correlationData = reinterpret_cast<uint64_t*>(&call->user_slot);
    callback(userdata, domain, cbid, &data);
  }
  if (call->site != SIMGPU_TOOLS_EXIT) return;
  const CUpti_ActivityKind api_kind = driver ? CUPTI_ACTIVITY_KIND_DRIVER : CUPTI_ACTIVITY_KIND_RUNTIME;
  const bool api_record = enabled(api_kind);
  const ClockMap map = clock_map();
  if (api_record && enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) {
    for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; ++kind) {
      if (t_external[kind].empty()) continue;
      CUpti_ActivityExternalCorrelation r{};
      r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
      r.externalKind = CUpti_ExternalCorrelationKind(kind);
      r.externalId = t_external[kind].back();
      r.correlationId = call->correlation_id;
      push_record(r);
    }
  }
  if (api_record) {
    CUpti_ActivityAPI r{};
    r.kind = api_kind;
    r.cbid = cbid;
    r.start = map.to_tool(call->start_ns);
    r.end = map.to_tool(call->end_ns);
    r.processId = uint32_t(getpid());
    r.threadId = thread_id();
    r.correlationId = call->correlation_id;
    r.returnValue = uint32_t(call->result);
    push_record(r);
  }
  if (driver && enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
    const CUpti_ActivitySynchronizationType type = sync_type(call->name);
    if (type != CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN) {
      CUpti_ActivitySynchronization2 r{};
      r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
      r.type = type;
      r.start = map.to_tool(call->start_ns);
      r.end = map.to_tool(call->end_ns);
      r.correlationId = call->correlation_id;
      r.contextId = s.driver != nullptr ? s.driver->context_id(call->context) : 0;
      r.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
      r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
      r.returnValue = uint32_t(call->result);
      push_record(r);
    }
  }
}

// Calls the subscriber's callback for the resource callback `cbid` when it
// enabled it (outside the state's lock: the callback may call CUPTI).
void deliver_resource(CUpti_CallbackId cbid, const CUpti_ResourceData& data) {
  State& s = state();
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard lock(s.mutex);
    Subscriber* sub = s.subscriber;
    if (sub == nullptr || !(sub->domain_enabled[CUPTI_CB_DOMAIN_RESOURCE] ||
                            sub->enabled.count((uint64_t(CUPTI_CB_DOMAIN_RESOURCE) << 32) | cbid)))
      return;
    callback = sub->callback;
    userdata = sub->userdata;
  }
  callback(userdata, CUPTI_CB_DOMAIN_RESOURCE, cbid, &data);
}

// cuGraphInstantiate made `node`, a clone of `original`, for `exec`: the
// resource callback CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED with CUpti_GraphData
// as its resourceDescriptor (cupti_callbacks.h).
void on_graph(void*, CUcontext context, CUgraphExec exec, CUgraph original_graph, CUgraphNode node,
              CUgraphNode original, CUgraphNodeType type) {
  CUpti_GraphData graph{};
  graph.originalGraph = original_graph;
  graph.node = node;
  graph.originalNode = original;
  graph.nodeType = type;
  graph.graphExec = exec;
  CUpti_ResourceData data{};
  data.context = context;
  data.resourceDescriptor = &graph;
  deliver_resource(CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, data);
}

void on_resource(void*, int event, CUcontext context, CUstream stream) {
  CUpti_CallbackId cbid = CUPTI_CBID_RESOURCE_INVALID;
  switch (event) {
    case SIMGPU_TOOLS_CONTEXT_CREATED: cbid = CUPTI_CBID_RESOURCE_CONTEXT_CREATED; break;
    case SIMGPU_TOOLS_CONTEXT_DESTROYING: cbid = CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING; break;
    case SIMGPU_TOOLS_STREAM_CREATED: cbid = CUPTI_CBID_RESOURCE_STREAM_CREATED; break;
    case SIMGPU_TOOLS_STREAM_DESTROYING: cbid = CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING; break;
    default: return;
  }
  CUpti_ResourceData data{};
  data.context = context;
  data.resourceHandle.stream = stream;
  deliver_resource(cbid, data);
}

// Attaches to the driver on first use. CUPTI_ERROR_NOT_INITIALIZED when the
// driver in the process is not the simulator (a real driver, or none).
CUptiResult attach() {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    if (s.driver != nullptr) return CUPTI_SUCCESS;
  }
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  auto get = driver != nullptr ? reinterpret_cast<PFN_simgpuGetToolsInterface>(dlsym(driver, "simgpuGetToolsInterface"))
                               : nullptr;
  const SimgpuToolsInterface* tools = nullptr;
  if (get == nullptr || get(SIMGPU_TOOLS_VERSION, &tools) != 0 || tools == nullptr)
    return fail(CUPTI_ERROR_NOT_INITIALIZED);
  std::lock_guard lock(s.mutex);
  if (s.driver == nullptr) {
    s.driver = tools;
    tools->set_api_callback(on_api, nullptr);
    tools->set_work_callback(on_work, nullptr);
    tools->set_resource_callback(on_resource, nullptr);
    // Memory events came with a later driver; an older one has no such entry.
    if (tools->size >= offsetof(SimgpuToolsInterface, set_memory_callback) + sizeof(void*))
      tools->set_memory_callback(on_memory, nullptr);
    if (tools->size >= offsetof(SimgpuToolsInterface, set_graph_callback) + sizeof(void*))
      tools->set_graph_callback(on_graph, nullptr);
  }
  return CUPTI_SUCCESS;
}

// Hands back what was recorded when the process exits normally.
void flush_at_exit() { flush_all(); }

bool supported_kind(CUpti_ActivityKind kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_MEMCPY:
    case CUPTI_ACTIVITY_KIND_MEMSET:
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return true;
    default:
      return false;
  }
}

CUptiResult set_kind(CUpti_ActivityKind kind, bool on) {
  if (!supported_kind(kind)) return fail(CUPTI_ERROR_NOT_COMPATIBLE);
  if (CUptiResult r = attach(); r != CUPTI_SUCCESS) return r;
  state().kind_enabled[kind].store(on);
  static std::once_flag exit_flush;
  std::call_once(exit_flush, [] { std::atexit(flush_at_exit); });
  return CUPTI_SUCCESS;
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  switch (result) {
    case CUPTI_SUCCESS: *str = "CUPTI_SUCCESS"; break;
    case CUPTI_ERROR_INVALID_PARAMETER: *str = "CUPTI_ERROR_INVALID_PARAMETER"; break;
    case CUPTI_ERROR_NOT_INITIALIZED: *str = "CUPTI_ERROR_NOT_INITIALIZED"; break;
    case CUPTI_ERROR_MAX_LIMIT_REACHED: *str = "CUPTI_ERROR_MAX_LIMIT_REACHED"; break;
    case CUPTI_ERROR_INVALID_KIND: *str = "CUPTI_ERROR_INVALID_KIND"; break;
    case CUPTI_ERROR_NOT_COMPATIBLE: *str = "CUPTI_ERROR_NOT_COMPATIBLE"; break;
    case CUPTI_ERROR_QUEUE_EMPTY: *str = "CUPTI_ERROR_QUEUE_EMPTY"; break;
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: *str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_INVALID_OPERATION: *str = "CUPTI_ERROR_INVALID_OPERATION"; break;
    case CUPTI_ERROR_INVALID_DEVICE: *str = "CUPTI_ERROR_INVALID_DEVICE"; break;
    case CUPTI_ERROR_INVALID_METRIC_NAME: *str = "CUPTI_ERROR_INVALID_METRIC_NAME"; break;
    case CUPTI_ERROR_NOT_SUPPORTED: *str = "CUPTI_ERROR_NOT_SUPPORTED"; break;
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: *str = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"; break;
    case CUPTI_ERROR_INVALID_CHIP_NAME: *str = "CUPTI_ERROR_INVALID_CHIP_NAME"; break;
    case CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT: *str = "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT"; break;
    case CUPTI_ERROR_OUT_OF_MEMORY: *str = "CUPTI_ERROR_OUT_OF_MEMORY"; break;
    case CUPTI_ERROR_UNKNOWN: *str = "CUPTI_ERROR_UNKNOWN"; break;
    default: *str = "CUPTI_ERROR_UNKNOWN"; return fail(CUPTI_ERROR_INVALID_PARAMETER);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetLastError(void) {
  const CUptiResult r = t_last_error;
  t_last_error = CUPTI_SUCCESS;
  return r;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  CUpti_TimestampCallbackFunc callback = state().timestamp.load();
  *timestamp = callback != nullptr ? callback() : clock_ns(CLOCK_REALTIME);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  state().timestamp.store(funcTimestamp);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  if (contextId == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (CUptiResult r = attach(); r != CUPTI_SUCCESS) return r;
  *contextId = state().driver->context_id(context);
  return *contextId != 0 ? CUPTI_SUCCESS : fail(CUPTI_ERROR_INVALID_CONTEXT);
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext, CUstream stream, uint32_t* streamId) {
  if (streamId == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (CUptiResult r = attach(); r != CUPTI_SUCCESS) return r;
  *streamId = state().driver->stream_id(stream);
  return *streamId != 0 ? CUPTI_SUCCESS : fail(CUPTI_ERROR_INVALID_STREAM);
}

CUptiResult CUPTIAPI cuptiGetGraphNodeId(CUgraphNode node, uint64_t* nodeId) {
  if (nodeId == nullptr || node == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (CUptiResult r = attach(); r != CUPTI_SUCCESS) return r;
  *nodeId = state().driver->graph_node_id(node);
  return *nodeId != 0 ? CUPTI_SUCCESS : fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiGetGraphId(CUgraph graph, uint32_t* pId) {
  if (pId == nullptr || graph == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (CUptiResult r = attach(); r != CUPTI_SUCCESS) return r;
  *pId = state().driver->graph_id(graph);
  return *pId != 0 ? CUPTI_SUCCESS : fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) { return set_kind(kind, true); }
CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) { return set_kind(kind, false); }
// Per-context enabling is process-wide here (README).
CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind) {
  if (context == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  return set_kind(kind, true);
}
CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind) {
  if (context == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  return set_kind(kind, false);
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                    CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  if (funcBufferRequested == nullptr || funcBufferCompleted == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.request = funcBufferRequested;
  s.complete = funcBufferCompleted;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  flush_all();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlush(CUcontext, uint32_t, uint32_t) {
  flush_all();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes, CUpti_Activity** record) {
  if (buffer == nullptr || record == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  uint8_t* next = buffer;
  if (*record != nullptr) {
    const size_t size = record_size(*record);
    if (size == 0) return fail(CUPTI_ERROR_INVALID_KIND);
    next = reinterpret_cast<uint8_t*>(*record) + size;
  }
  if (next >= buffer + validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (dropped == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard lock(s.mutex);
  *dropped = s.dropped;
  s.dropped = 0;  // documented: the count is reset by the call
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  if (valueSize == nullptr || value == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard lock(s.mutex);
  switch (attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE:
      if (*valueSize != sizeof(size_t)) return fail(CUPTI_ERROR_INVALID_PARAMETER);
      s.device_buffer_size = *static_cast<size_t*>(value);
      return CUPTI_SUCCESS;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT:
      if (*valueSize != sizeof(size_t)) return fail(CUPTI_ERROR_INVALID_PARAMETER);
      s.pool_limit = *static_cast<size_t*>(value);
      return CUPTI_SUCCESS;
    default:
      return fail(CUPTI_ERROR_NOT_SUPPORTED);
  }
}

CUptiResult CUPTIAPI cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize, void* value) {
  if (valueSize == nullptr || value == nullptr || *valueSize != sizeof(size_t)) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  State& s = state();
  std::lock_guard lock(s.mutex);
  switch (attr) {
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE: *static_cast<size_t*>(value) = s.device_buffer_size; return CUPTI_SUCCESS;
    case CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT: *static_cast<size_t*>(value) = s.pool_limit; return CUPTI_SUCCESS;
    default: return fail(CUPTI_ERROR_NOT_SUPPORTED);
  }
}

CUptiResult CUPTIAPI cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return fail(CUPTI_ERROR_INVALID_PARAMETER);
  t_external[kind].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* lastId) {
  if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
    return fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (t_external[kind].empty()) return fail(CUPTI_ERROR_QUEUE_EMPTY);
  if (lastId != nullptr) *lastId = t_external[kind].back();
  t_external[kind].pop_back();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                                       CUpti_SubscriberParams* params) {
  if (subscriber == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (CUptiResult r = attach(); r != CUPTI_SUCCESS) return r;
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (s.subscriber != nullptr) {
    // Documented for _v2: the name of the subscriber already registered.
    if (params != nullptr && params->oldSubscriberName != nullptr && params->oldSubscriberSize > 0) {
      std::strncpy(params->oldSubscriberName, s.subscriber->name.c_str(), params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return fail(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  }
  auto* sub = new Subscriber;
  sub->callback = callback;
  sub->userdata = userdata;
  if (params != nullptr && params->subscriberName != nullptr) sub->name = params->subscriberName;
  s.subscriber = sub;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(sub);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  return cuptiSubscribe_v2(subscriber, callback, userdata, nullptr);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (subscriber == nullptr || reinterpret_cast<Subscriber*>(subscriber) != s.subscriber)
    return fail(CUPTI_ERROR_INVALID_PARAMETER);
  // Callbacks in flight on other threads copied what they need; the
  // subscriber is kept (a handful of bytes) so a late reader never faults.
  s.subscriber = nullptr;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto* sub = reinterpret_cast<Subscriber*>(subscriber);
  if (sub == nullptr || sub != s.subscriber || domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE)
    return fail(CUPTI_ERROR_INVALID_PARAMETER);
  const uint64_t key = (uint64_t(domain) << 32) | cbid;
  if (enable != 0)
    sub->enabled.insert(key);
  else
    sub->enabled.erase(key);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  auto* sub = reinterpret_cast<Subscriber*>(subscriber);
  if (sub == nullptr || sub != s.subscriber || domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE)
    return fail(CUPTI_ERROR_INVALID_PARAMETER);
  sub->domain_enabled[domain] = enable != 0;
  if (enable == 0) {
    for (auto it = sub->enabled.begin(); it != sub->enabled.end();)
      it = (*it >> 32) == uint64_t(domain) ? sub->enabled.erase(it) : std::next(it);
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  for (int domain = CUPTI_CB_DOMAIN_DRIVER_API; domain < CUPTI_CB_DOMAIN_SIZE; ++domain)
    if (CUptiResult r = cuptiEnableDomain(enable, subscriber, CUpti_CallbackDomain(domain)); r != CUPTI_SUCCESS) return r;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  if (name == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  auto search = [&](const auto& rows) -> const char* {
    for (const CbidRow& row : rows)
      if (row.cbid == cbid) return row.name;
    return nullptr;
  };
  const char* found = domain == CUPTI_CB_DOMAIN_DRIVER_API    ? search(kDriverCbids)
                      : domain == CUPTI_CB_DOMAIN_RUNTIME_API ? search(kRuntimeCbids)
                                                              : nullptr;
  if (found == nullptr) return fail(CUPTI_ERROR_INVALID_PARAMETER);
  *name = found;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void) {
  flush_all();
  State& s = state();
  for (auto& kind : s.kind_enabled) kind.store(false);
  std::lock_guard lock(s.mutex);
  s.request = nullptr;
  s.complete = nullptr;
  return CUPTI_SUCCESS;
}

}  // extern "C"
