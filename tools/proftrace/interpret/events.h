// What the interpretation pass (interpreter.h) hands every output: each
// event of the trace once, resolved. A call comes with its call stacks; a
// launch, copy, memset or graph launch with the GPU work it caused; GPU work
// with the collective it belongs to. Outputs implement Consumer and override
// what they show; nothing outside interpret/ reads records.
//
// Adding a record kind: a callback here, one case in Interpreter::dispatch,
// and an override in each output that shows it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "formats/records.h"
#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools::interpret {

// A section (one process image) as the pass knows it.
struct Section {
  uint64_t id = 0;
  // Its definitions; null when they were lost (a damaged trace): its events
  // still come, and an output decides whether it can show them.
  const SectionModel* model = nullptr;
  // 0, 1, 2... in the order the pass first met the section (the model's
  // sections first, by id): an index for an output's per-section tables.
  size_t index = 0;
};

// A call's stacks (CallStack ids of the section; 0 when it has none).
struct Stacks {
  uint32_t native = 0;
  uint32_t python = 0;
  uint8_t point = 0;  // format::StackPoint: where the shim took them (launch, memory, sync)
  bool empty() const { return native == 0 && python == 0; }
  bool at(format::StackPoint p) const { return point == static_cast<uint8_t>(p); }
};

// What kind of call a record kind holds, as the SQL export names it:
// "call", "kernel_launch", "memcpy", "memset", "synchronize", "object",
// "memory", "memory_info", "communicator", "collective",
// "collective_group", "nvtx", "stream_capture", "graph_exec",
// "graph_launch", else "other".
const char* call_kind_name(format::RecordKind kind);

// Any call, whatever its record kind: what every call has.
struct Call {
  const Section* section;
  uint32_t tid;
  format::RecordKind kind;  // the record that holds it (ApiCall, KernelLaunch, ...)
  alignas(8) format::ApiSpan span;  // packed: aligned here so that its fields bind to references
  Stacks stacks;
  uint64_t ordinal;  // 0, 1, 2... the calls of the pass in the order they were read
};

// One event of a thread: its record, and the stacks of the call (for kinds
// that are calls).
template <typename Record>
struct Event {
  const Section* section;
  uint32_t tid;  // 0: before the chunk's first ThreadBatch
  // The (packed, alignment 1) record on 8 bytes: its 8-byte fields are
  // naturally aligned within it, so they can be bound to references.
  alignas(8) Record record;
  Stacks stacks;
  uint16_t record_bytes;  // older, shorter versions of a record read 0 for what they lack
};

// The record of an event (an ApiCall with its event: cudaEventRecord,
// cuEventRecord, hipEventRecord...) that a wait for the event waits for.
struct EventRecorded {
  uint32_t tid = 0;             // the recording thread (per-thread default streams are its own)
  uint64_t stream = 0;          // as records carry it (kStreamLegacy, kStreamPerThread, a handle)
  uint64_t correlation_id = 0;  // of the record call
  uint64_t begin_ns = 0;
};

// A synchronization, and for a wait on an event (an event sync, a stream
// waiting for an event) the record of that event it waits for: the last
// one read that began before the wait began; null when none was read
// (recorded before the trace began, by an older shim, or read later).
struct SynchronizeEvent : Event<format::SynchronizeRecord> {
  const EventRecorded* recorded = nullptr;
};

// A CPU sample (CpuSample): its stacks are the record's (point 0), set in
// `stacks` as for a call.
using CpuSampleEvent = Event<format::CpuSampleRecord>;

// A libc call that blocked (BlockingCall), with the stacks of the CallStack
// (point kBlocking) that follows it. Its name is the ApiDef of span.api
// (domain kOsRuntime): SectionModel::api_name.
using BlockingCallEvent = Event<format::BlockingCallRecord>;

struct NvtxEvent : Event<format::NvtxEventRecord> {
  std::string_view inline_message;  // the message the record carries itself ("" when registered or none)
};

enum class OperationKind : uint8_t { kKernel, kCopy, kMemset, kGraphLaunch };

// A launch, copy, memset or graph launch: work its call put on a stream.
struct Operation {
  const Section* section;
  uint32_t tid;
  OperationKind kind;
  union {
    // Aligns the (packed, alignment 1) records on 8 bytes: their 8-byte
    // fields are naturally aligned within a record, so they become aligned
    // and can be bound to references.
    uint64_t alignment_;
    format::KernelLaunchRecord launch;
    format::MemoryCopyRecord copy;
    format::MemorySetRecord set;
    format::GraphLaunchRecord graph_launch;
  };
  Stacks stacks;
  uint16_t record_bytes;

  const format::ApiSpan& span() const {
    switch (kind) {
      case OperationKind::kCopy: return copy.span;
      case OperationKind::kMemset: return set.span;
      case OperationKind::kGraphLaunch: return graph_launch.span;
      default: return launch.span;
    }
  }
  // The stream as the program named it.
  uint64_t stream() const {
    switch (kind) {
      case OperationKind::kKernel: return launch.stream;
      case OperationKind::kCopy: return copy.stream;
      case OperationKind::kGraphLaunch: return graph_launch.stream;
      default: return set.stream;
    }
  }
  // Copies and memsets; 0 for the others.
  uint64_t bytes() const {
    switch (kind) {
      case OperationKind::kCopy: return copy.bytes;
      case OperationKind::kMemset: return set.bytes;
      default: return 0;
    }
  }
  bool captured() const { return (span().flags & format::kApiCaptured) != 0; }
};

// The collective a piece of GPU work is the kernel of: one instance on
// every rank ("<comm id>/<sequence>"), or the group that launched it.
struct CollectiveInstance {
  bool group = false;
  bool succeeded = true;  // the call returned success
  uint64_t comm_id = 0;
  uint64_t sequence = 0;
  uint64_t group_id = 0;
};

// Work the GPU did, timed (a GpuActivity).
struct GpuWork {
  const Section* section;
  uint32_t tid;  // the thread batch it came in (the timing backend's)
  alignas(8) format::GpuActivityRecord activity;
  // Resolved when the work is handed over; null when not known then.
  const CollectiveInstance* collective;  // the collective it is the kernel of
  const format::GraphNodeRecord* node;   // the graph node it ran (activity.graph_node)
  const Operation* operation;            // on_gpu_work_read: its operation, when joined by then
  // Alone (no operation): its call came before the first call its process
  // has in the trace, which a flight recorder's window (or a capture window
  // CUPTI saw past) cut off; not work without a hooked call.
  bool before_first_call;
  uint64_t duration_ns() const { return activity.end_ns > activity.start_ns ? activity.end_ns - activity.start_ns : 0; }
};

// The outputs' side of the pass. Every callback has a default that ignores
// the event. Events come in the order the pass resolves them: a call once
// its stack is known (the thread's next record), an operation once its GPU
// work is (or can no longer be) known; records of one thread stay in order.
class Consumer {
 public:
  virtual ~Consumer() = default;

  // Every call (every record with an ApiSpan), right before the callback
  // of its kind below.
  virtual void on_any_call(const Call&) {}
  // InterpretOptions::calls_in_file_order only: the stacks of a call handed
  // over earlier (the same ordinal), once they are read.
  virtual void on_call_stacks(const Call&) {}

  // Host calls (a record kind each).
  virtual void on_call(const Event<format::ApiCallRecord>&) {}
  virtual void on_synchronize(const SynchronizeEvent&) {}
  virtual void on_lifecycle(const Event<format::ObjectLifecycleRecord>&) {}
  // Allocations, frees, VMM calls; a block carried into a capture window is
  // flagged kApiCarried (live memory, not a call).
  virtual void on_memory_operation(const Event<format::MemoryOperationRecord>&) {}
  virtual void on_memory_info(const Event<format::MemoryInfoRecord>&) {}
  virtual void on_collective(const Event<format::CollectiveRecord>&) {}
  virtual void on_collective_comm(const Event<format::CollectiveCommRecord>&) {}
  virtual void on_collective_group(const Event<format::CollectiveGroupRecord>&) {}
  virtual void on_graph_exec(const Event<format::GraphExecRecord>&) {}
  virtual void on_stream_capture(const Event<format::StreamCaptureRecord>&) {}
  virtual void on_nvtx(const NvtxEvent&) {}

  // Work put on a stream: first when its call is read (what is in flight),
  // then with the GPU work it caused (`gpu` null: none came, or it was
  // captured into a graph and ran only when the graph was launched).
  virtual void on_operation_read(const Operation&) {}
  virtual void on_operation(const Operation&, const GpuWork* /*gpu*/) {}
  // A graph launch timed node by node (CUPTI): each node after the first,
  // which came with the launch in on_operation; then, once no more of its
  // nodes can come (it left the join's window, or the trace ended),
  // on_nodes_done.
  virtual void on_more_gpu_work(const Operation&, const GpuWork&) {}
  virtual void on_nodes_done(const Operation&) {}
  // GPU work whose call is not in the trace.
  virtual void on_gpu_work_alone(const GpuWork&) {}
  // Every piece of GPU work once more, in the order it was read (which is
  // close to the order it ended), after the join it may have completed.
  virtual void on_gpu_work_read(const GpuWork&) {}
  // GPU work the timing backend saw that no hooked call submitted.
  virtual void on_unattributed_gpu_work(const Event<format::UnattributedGpuWorkRecord>&) {}

  // What the CPU was doing (formats/README.md, "What the CPU was doing"):
  // samples of a thread's stacks, the calls where a thread blocked (not
  // calls in on_any_call: they are the program's waits, not traced APIs),
  // and each process's sampling state.
  virtual void on_cpu_sample(const CpuSampleEvent&) {}
  virtual void on_blocking_call(const BlockingCallEvent&) {}
  virtual void on_cpu_sampling_info(const Event<format::CpuSamplingInfoRecord>&) {}

  // Other records.
  virtual void on_graph_node(const Event<format::GraphNodeRecord>&) {}
  virtual void on_api_count(const Event<format::ApiCountRecord>&) {}
  // A device metric's value (the launcher's sampler section: its definition
  // is SectionModel::gpu_metrics, its device SectionModel::devices).
  virtual void on_gpu_metric_sample(const Event<format::GpuMetricSampleRecord>&) {}
  // Events the trace lost (LOST records).
  virtual void on_lost(const Event<format::LostRecord>&) {}
  // Not a loss: GPU work of calls outside every capture window, which the
  // timing backend timed anyway and dropped (a count and its span).
  virtual void on_work_outside_windows(const Event<format::LostRecord>&) {}

  // The end of one input file, with the capture windows its sections had.
  virtual void on_input_end(const std::vector<CaptureWindow>& /*windows*/) {}
  // The end of the pass, with the capture windows of every input by begin
  // time (InterpretResult::windows).
  virtual void on_pass_end(const std::vector<CaptureWindow>& /*windows*/) {}
  // False stops the pass early (a failed output).
  virtual bool keep_going() { return true; }
};

}  // namespace proflaunch::tools::interpret
