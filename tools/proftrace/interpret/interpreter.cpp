#include "tools/proftrace/interpret/interpreter.h"

#include <map>
#include <unordered_map>

#include <cstring>

#include "formats/reader.h"
#include "tools/proftrace/interpret/call_stack_pairing.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::interpret {

using namespace format;

namespace {

// The collectives whose kernels may still be joined: a Collective (or
// CollectiveGroup) record comes when its call returns, after the launch
// of its kernel and usually before that kernel's GPU work. Bounded: when
// full, the older half leaves (their kernels were joined long ago).
class RecentCollectives {
 public:
  void note(const Section& section, const RecordView& view) {
    if (view.record_kind() == RecordKind::kCollective) {
      const auto record = view.as<CollectiveRecord>();
      // Members of a group share the group's kernel; the group names it.
      if (record.sequence != 0 && record.group_id == 0)
        remember(key(section, record.span.correlation_id),
                 CollectiveInstance{false, record.span.result == 0, record.comm_id, record.sequence, 0});
    } else if (view.record_kind() == RecordKind::kCollectiveGroup) {
      const auto record = view.as<CollectiveGroupRecord>();
      remember(key(section, record.span.correlation_id),
               CollectiveInstance{true, record.span.result == 0, 0, 0, record.group_id});
    }
  }
  const CollectiveInstance* find(const Section& section, uint64_t correlation_id) const {
    if (instances_.empty()) return nullptr;  // most traces have no collectives: no hashing per GPU activity
    auto found = instances_.find(key(section, correlation_id));
    return found != instances_.end() ? &found->second : nullptr;
  }

 private:
  static constexpr size_t kMaxRemembered = size_t{1} << 16;
  static uint64_t key(const Section& section, uint64_t correlation_id) {
    return (section.id * 0x9E3779B97F4A7C15ull) ^ correlation_id;
  }
  void remember(uint64_t key, const CollectiveInstance& instance) {
    if (order_.size() >= kMaxRemembered) {
      for (size_t i = 0; i < kMaxRemembered / 2; ++i) instances_.erase(order_[i]);
      order_.erase(order_.begin(), order_.begin() + kMaxRemembered / 2);
    }
    instances_[key] = instance;
    order_.push_back(key);
  }
  std::unordered_map<uint64_t, CollectiveInstance> instances_;
  std::vector<uint64_t> order_;
};

// The GraphNode records read so far, by section and node handle: what each
// node of a graph launch timed node by node (CUPTI) ran. Written at
// instantiation, a node's record comes before any launch of its graph.
// Grows with the nodes instantiated, not with launches.
class GraphNodes {
 public:
  void add(uint64_t section, const GraphNodeRecord& node) { nodes_[{section, node.node}] = node; }
  const GraphNodeRecord* find(uint64_t section, uint64_t node) const {
    auto found = nodes_.find({section, node});
    return found != nodes_.end() ? &found->second : nullptr;
  }

 private:
  std::map<std::pair<uint64_t, uint64_t>, GraphNodeRecord> nodes_;
};

// The last records of each event (ApiCalls with an event), by section and
// event handle, for the waits on it: a wait waits for the last record that
// began before it did. Threads' records arrive in chunks, not in time
// order, so a few are kept per event; a destroyed event is forgotten (its
// handle may come back). Grows with the events alive, not with records.
class EventRecords {
 public:
  void add(uint64_t section, uint32_t tid, const ApiCallRecord& call) {
    History& history = events_[{section, call.event}];
    history.last[history.next++ % kKept] =
        EventRecorded{tid, call.stream, call.span.correlation_id, call.span.begin_ns};
  }
  const EventRecorded* find(uint64_t section, uint64_t event, uint64_t wait_begin_ns) const {
    auto found = events_.find({section, event});
    if (found == events_.end()) return nullptr;
    const EventRecorded* best = nullptr;
    for (const EventRecorded& r : found->second.last)
      if (r.correlation_id != 0 && r.begin_ns <= wait_begin_ns && (best == nullptr || r.begin_ns >= best->begin_ns))
        best = &r;
    return best;
  }
  void forget(uint64_t section, uint64_t event) { events_.erase({section, event}); }

 private:
  static constexpr size_t kKept = 4;
  struct History {
    EventRecorded last[kKept];
    size_t next = 0;
  };
  std::map<std::pair<uint64_t, uint64_t>, History> events_;
};

}  // namespace

// One run: the visitor of the reader, the pairing and the join.
class Interpreter::Pass : public RecordVisitor, public JoinSink {
 public:
  Pass(Interpreter& owner, const InterpretOptions& options)
      : owner_(owner),
        consumers_(owner.consumers_),
        pairing_([this](const Section& section, const RecordView& record, Stacks stacks, uint64_t ordinal) {
          dispatch(section, record, stacks, ordinal);
        }),
        join_(*this, options.join_window),
        on_chunk_(options.on_chunk),
        only_defined_sections_(options.only_defined_sections),
        calls_in_file_order_(options.calls_in_file_order),
        join_gpu_work_(options.join_gpu_work) {}

  void read(InputTrace& input, uint64_t bytes_before) {
    bytes_before_ = bytes_before;
    input.events_report = input.reader->read(*this, ChunkSelection::kEventsOnly);
    pairing_.flush();  // what waited for a stack at the end of the input has none
    const std::vector<CaptureWindow> windows = windows_.finish(owner_.model_);
    windows_ = CaptureWindowCollector();
    for (Consumer* c : consumers_) c->on_input_end(windows);
  }

  InterpretResult finish() {
    join_.finish();
    result_.windows = all_windows_.finish(owner_.model_);
    for (Consumer* c : consumers_) c->on_pass_end(result_.windows);
    result_.join = join_.stats();
    result_.unpaired_stacks += pairing_.unpaired_stacks();
    return result_;
  }

  // RecordVisitor
  void on_chunk(const ChunkInfo& chunk) override {
    section_ = &owner_.section(chunk.section_id);
    if (on_chunk_) on_chunk_(bytes_before_ + chunk.file_offset, result_.records_read);
  }
  bool keep_going() override {
    for (Consumer* c : consumers_)
      if (!c->keep_going()) return false;
    return true;
  }
  void on_record(const RecordView& record) override {
    ++result_.records_read;
    if (only_defined_sections_ && section_->model == nullptr) {
      ++result_.records_without_definitions;
      return;
    }
    // Known as soon as read: the record itself may wait for its stack while
    // its kernel's GPU work is joined.
    if (record.kind == static_cast<uint16_t>(RecordKind::kCollective) ||
        record.kind == static_cast<uint16_t>(RecordKind::kCollectiveGroup))
      collectives_.note(*section_, record);
    const uint64_t ordinal = is_call(record) ? next_call_ordinal_++ : 0;
    if (calls_in_file_order_ && !is_blocking(record)) {
      read_in_file_order(*section_, record, ordinal);
      return;
    }
    if (pairing_.offer(*section_, record, ordinal)) return;
    dispatch(*section_, record, {}, ordinal);
  }

  // JoinSink
  void joined(const Operation& operation, const GpuWork& work) override {
    const GpuWork gpu = resolved(work);
    for (Consumer* c : consumers_) c->on_operation(operation, &gpu);
    // The join's entry: intact until the join inserts again, after the
    // GpuActivity being read has been handed over.
    joined_now_ = &operation;
  }
  void operation_alone(const Operation& operation) override {
    for (Consumer* c : consumers_) c->on_operation(operation, nullptr);
  }
  void more_node_work(const Operation& operation, const GpuWork& work) override {
    const GpuWork gpu = resolved(work);
    for (Consumer* c : consumers_) c->on_more_gpu_work(operation, gpu);
    joined_now_ = &operation;
  }
  void nodes_done(const Operation& operation) override {
    for (Consumer* c : consumers_) c->on_nodes_done(operation);
  }
  void activity_alone(const GpuWork& work) override {
    const GpuWork gpu = resolved(work);
    for (Consumer* c : consumers_) c->on_gpu_work_alone(gpu);
  }

 private:
  template <typename Record>
  Event<Record> event(const Section& section, const RecordView& record, Stacks stacks) const {
    return Event<Record>{&section, record.tid, record.as<Record>(), stacks, record.bytes};
  }

  // Calls `callback` of every consumer with the event of `record`.
  template <typename Record>
  void each(const Section& section, const RecordView& record, Stacks stacks,
            void (Consumer::*callback)(const Event<Record>&)) {
    const Event<Record> e = event<Record>(section, record, stacks);
    for (Consumer* c : consumers_) (c->*callback)(e);
  }

  // What is known of `work` now: its collective, its graph node.
  GpuWork resolved(const GpuWork& work) const {
    GpuWork known = work;
    resolve(known);
    return known;
  }
  void resolve(GpuWork& work) const {
    work.collective = collectives_.find(*work.section, work.activity.correlation_id);
    if (work.activity.graph_node != 0) work.node = graph_nodes_.find(work.section->id, work.activity.graph_node);
  }

  void add_gpu_work(const Section& section, const RecordView& record) {
    GpuWork work{};
    work.section = &section;
    work.tid = record.tid;
    work.activity = record.as<GpuActivityRecord>();
    joined_now_ = nullptr;
    if (join_gpu_work_) join_.add(work);
    resolve(work);
    work.operation = joined_now_;
    for (Consumer* c : consumers_) c->on_gpu_work_read(work);
  }

  // Records with an ApiSpan but BlockingCall: the program's own waits are
  // not calls of a traced API (they have their own callback).
  static bool is_call(const RecordView& record) {
    return has_api_span(record.kind) && record.kind != static_cast<uint16_t>(RecordKind::kBlockingCall) &&
           record.bytes >= kApiSpanOffset + sizeof(ApiSpan);
  }
  // A BlockingCall, or the CallStack that follows one: paired by the
  // pairing in either mode.
  static bool is_blocking(const RecordView& record) {
    if (record.kind == static_cast<uint16_t>(RecordKind::kBlockingCall)) return true;
    return record.kind == static_cast<uint16_t>(RecordKind::kCallStack) &&
           record.as<CallStackRecord>().point == static_cast<uint8_t>(StackPoint::kBlocking);
  }

  static Call call_of(const Section& section, const RecordView& record, Stacks stacks, uint64_t ordinal) {
    Call call{&section, record.tid, record.record_kind(), {}, stacks, ordinal};
    std::memcpy(&call.span, record.data + kApiSpanOffset, sizeof call.span);
    return call;
  }

  // calls_in_file_order: every record at once; a CallStack then names the
  // stacks of the thread's last call (the call right before it, as the
  // pairing has it).
  void read_in_file_order(const Section& section, const RecordView& record, uint64_t ordinal) {
    const uint64_t thread = section.id * 0x9E3779B97F4A7C15ull ^ record.tid;
    if (record.record_kind() == RecordKind::kCallStack) {
      const auto stack = record.as<CallStackRecord>();
      auto last = last_calls_.find(thread);
      if (last == last_calls_.end() || last->second.span.correlation_id != stack.correlation_id) {
        ++result_.unpaired_stacks;
        return;
      }
      Call call = last->second;
      last_calls_.erase(last);
      call.stacks = Stacks{stack.native_stack, stack.python_stack, stack.point};
      for (Consumer* c : consumers_) c->on_call_stacks(call);
      return;
    }
    if (is_call(record) && section.model != nullptr && !section.model->stacks.empty())
      last_calls_[thread] = call_of(section, record, {}, ordinal);
    dispatch(section, record, {}, ordinal);
  }

  void add_operation(const Section& section, const RecordView& record, Stacks stacks, OperationKind kind) {
    Operation op{};
    op.section = &section;
    op.tid = record.tid;
    op.kind = kind;
    switch (kind) {
      case OperationKind::kKernel: op.launch = record.as<KernelLaunchRecord>(); break;
      case OperationKind::kCopy: op.copy = record.as<MemoryCopyRecord>(); break;
      case OperationKind::kMemset: op.set = record.as<MemorySetRecord>(); break;
      case OperationKind::kGraphLaunch: op.graph_launch = record.as<GraphLaunchRecord>(); break;
    }
    op.stacks = stacks;
    op.record_bytes = record.bytes;
    for (Consumer* c : consumers_) c->on_operation_read(op);
    if (!join_gpu_work_) return;
    // Captured work did not run: it has no GPU side to wait for.
    if (op.captured()) operation_alone(op);
    else join_.add(op);
  }

  // Every record once: a held one when its stack is known (or known to be none).
  void dispatch(const Section& section, const RecordView& record, Stacks stacks, uint64_t ordinal) {
    if (is_call(record)) {
      const Call call = call_of(section, record, stacks, ordinal);
      for (Consumer* c : consumers_) c->on_any_call(call);
    }
    switch (record.record_kind()) {
      case RecordKind::kApiCall: {
        const Event<ApiCallRecord> e = event<ApiCallRecord>(section, record, stacks);
        if (e.record.event != 0 && e.record.span.result == 0) event_records_.add(section.id, e.tid, e.record);
        for (Consumer* c : consumers_) c->on_call(e);
        break;
      }
      case RecordKind::kSynchronize: {
        SynchronizeEvent e{event<SynchronizeRecord>(section, record, stacks)};
        if (e.record.event != 0) e.recorded = event_records_.find(section.id, e.record.event, e.record.span.begin_ns);
        for (Consumer* c : consumers_) c->on_synchronize(e);
        break;
      }
      case RecordKind::kObjectLifecycle: {
        const auto object = record.as<ObjectLifecycleRecord>();
        if (object.object == static_cast<uint8_t>(ObjectKind::kEvent) &&
            object.action == static_cast<uint8_t>(LifecycleAction::kDestroy) && object.span.result == 0)
          event_records_.forget(section.id, object.handle);
        each(section, record, stacks, &Consumer::on_lifecycle);
        break;
      }
      case RecordKind::kLost:
        if (record.as<LostRecord>().reason == static_cast<uint32_t>(LostReason::kOutsideCaptureWindow))
          each(section, record, stacks, &Consumer::on_work_outside_windows);
        else
          each(section, record, stacks, &Consumer::on_lost);
        break;
      case RecordKind::kKernelLaunch: add_operation(section, record, stacks, OperationKind::kKernel); break;
      case RecordKind::kMemoryCopy: add_operation(section, record, stacks, OperationKind::kCopy); break;
      case RecordKind::kMemorySet: add_operation(section, record, stacks, OperationKind::kMemset); break;
      case RecordKind::kGraphLaunch: add_operation(section, record, stacks, OperationKind::kGraphLaunch); break;
      case RecordKind::kGraphNode:
        graph_nodes_.add(section.id, record.as<GraphNodeRecord>());
        each(section, record, stacks, &Consumer::on_graph_node);
        break;
      case RecordKind::kGraphExec: each(section, record, stacks, &Consumer::on_graph_exec); break;
      case RecordKind::kStreamCapture: each(section, record, stacks, &Consumer::on_stream_capture); break;
      case RecordKind::kCollective: each(section, record, stacks, &Consumer::on_collective); break;
      case RecordKind::kCollectiveComm: each(section, record, stacks, &Consumer::on_collective_comm); break;
      case RecordKind::kCollectiveGroup: each(section, record, stacks, &Consumer::on_collective_group); break;
      case RecordKind::kUnattributedGpuWork:
        each(section, record, stacks, &Consumer::on_unattributed_gpu_work);
        break;
      case RecordKind::kGpuActivity: add_gpu_work(section, record); break;
      case RecordKind::kMemoryOperation: each(section, record, stacks, &Consumer::on_memory_operation); break;
      case RecordKind::kCaptureWindow:
        if (section.model != nullptr) {
          windows_.on_record(*section.model, record);
          all_windows_.on_record(*section.model, record);
        }
        break;
      case RecordKind::kMemoryInfo: each(section, record, stacks, &Consumer::on_memory_info); break;
      case RecordKind::kNvtxEvent: {
        NvtxEvent e{event<NvtxEventRecord>(section, record, stacks), nvtx_inline_message(record.data, record.bytes)};
        for (Consumer* c : consumers_) c->on_nvtx(e);
        break;
      }
      case RecordKind::kApiCount: each(section, record, stacks, &Consumer::on_api_count); break;
      case RecordKind::kGpuMetricSample: each(section, record, stacks, &Consumer::on_gpu_metric_sample); break;
      case RecordKind::kCpuSample: {
        const auto sample = record.as<CpuSampleRecord>();
        each(section, record, Stacks{sample.native_stack, sample.python_stack, 0}, &Consumer::on_cpu_sample);
        break;
      }
      case RecordKind::kBlockingCall:
        if (record.bytes >= sizeof(BlockingCallRecord)) each(section, record, stacks, &Consumer::on_blocking_call);
        break;
      case RecordKind::kCpuSamplingInfo: each(section, record, stacks, &Consumer::on_cpu_sampling_info); break;
      default: break;  // definitions, ThreadBatch
    }
  }

  Interpreter& owner_;
  const std::vector<Consumer*>& consumers_;
  CallStackPairing pairing_;
  CorrelationJoin join_;
  std::function<void(uint64_t, uint64_t)> on_chunk_;
  const bool only_defined_sections_;
  const bool calls_in_file_order_;
  const bool join_gpu_work_;
  uint64_t next_call_ordinal_ = 0;
  std::unordered_map<uint64_t, Call> last_calls_;  // calls_in_file_order: per thread, the call a CallStack may follow
  RecentCollectives collectives_;
  GraphNodes graph_nodes_;
  EventRecords event_records_;
  const Operation* joined_now_ = nullptr;  // the operation the GpuActivity being read was joined with
  CaptureWindowCollector windows_;      // of the input being read
  CaptureWindowCollector all_windows_;  // of every input
  const Section* section_ = nullptr;
  uint64_t bytes_before_ = 0;
  InterpretResult result_;
};

const char* call_kind_name(RecordKind kind) {
  switch (kind) {
    case RecordKind::kApiCall: return "call";
    case RecordKind::kKernelLaunch: return "kernel_launch";
    case RecordKind::kMemoryCopy: return "memcpy";
    case RecordKind::kMemorySet: return "memset";
    case RecordKind::kSynchronize: return "synchronize";
    case RecordKind::kObjectLifecycle: return "object";
    case RecordKind::kMemoryOperation: return "memory";
    case RecordKind::kMemoryInfo: return "memory_info";
    case RecordKind::kCollectiveComm: return "communicator";
    case RecordKind::kCollective: return "collective";
    case RecordKind::kCollectiveGroup: return "collective_group";
    case RecordKind::kNvtxEvent: return "nvtx";
    case RecordKind::kStreamCapture: return "stream_capture";
    case RecordKind::kGraphExec: return "graph_exec";
    case RecordKind::kGraphLaunch: return "graph_launch";
    default: return "other";
  }
}

Interpreter::Interpreter(const TraceModel& model, std::vector<Consumer*> consumers, InterpretOptions options)
    : model_(model), consumers_(std::move(consumers)), options_(std::move(options)) {
  for (const auto& [id, section_model] : model.sections()) {
    auto section = std::make_unique<Section>();
    section->id = id;
    section->model = &section_model;
    section->index = sections_.size();
    by_id_[id] = section.get();
    sections_.push_back(std::move(section));
  }
}

Interpreter::~Interpreter() = default;

const Section& Interpreter::section(uint64_t section_id) {
  if (auto found = by_id_.find(section_id); found != by_id_.end()) return *found->second;
  auto section = std::make_unique<Section>();
  section->id = section_id;
  section->index = sections_.size();
  by_id_[section_id] = section.get();
  sections_.push_back(std::move(section));
  return *sections_.back();
}

InterpretResult Interpreter::run(std::vector<InputTrace>& inputs) {
  Pass pass(*this, options_);
  uint64_t bytes_before = 0;
  for (auto& input : inputs) {
    pass.read(input, bytes_before);
    bytes_before += input.reader->file_bytes();
  }
  return pass.finish();
}

}  // namespace proflaunch::tools::interpret
