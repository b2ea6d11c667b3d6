#include "tools/proftrace/interpret/interpreter.h"

#include <unordered_map>

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
                 CollectiveInstance{false, record.comm_id, record.sequence, 0});
    } else if (view.record_kind() == RecordKind::kCollectiveGroup) {
      const auto record = view.as<CollectiveGroupRecord>();
      remember(key(section, record.span.correlation_id), CollectiveInstance{true, 0, 0, record.group_id});
    }
  }
  const CollectiveInstance* find(const Section& section, uint64_t correlation_id) const {
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

}  // namespace

// One run: the visitor of the reader, the pairing and the join.
class Interpreter::Pass : public RecordVisitor, public JoinSink {
 public:
  Pass(Interpreter& owner, const InterpretOptions& options)
      : owner_(owner),
        consumers_(owner.consumers_),
        pairing_([this](const Section& section, const RecordView& record, Stacks stacks) {
          dispatch(section, record, stacks);
        }),
        join_(*this, options.join_window),
        on_chunk_(options.on_chunk) {}

  void read(InputTrace& input, uint64_t bytes_before) {
    bytes_before_ = bytes_before;
    input.events_report = input.reader->read(*this, ChunkSelection::kEventsOnly);
    pairing_.flush();  // what waited for a stack at the end of the input has none
    const std::vector<CaptureWindow> windows = windows_.finish(owner_.model_);
    windows_ = CaptureWindowCollector();
    for (Consumer* c : consumers_) c->on_input_end(windows);
    result_.windows.insert(result_.windows.end(), windows.begin(), windows.end());
  }

  InterpretResult finish() {
    join_.finish();
    result_.join = join_.stats();
    result_.unpaired_stacks = pairing_.unpaired_stacks();
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
    // Known as soon as read: the record itself may wait for its stack while
    // its kernel's GPU work is joined.
    collectives_.note(*section_, record);
    if (pairing_.offer(*section_, record)) return;
    dispatch(*section_, record, {});
  }

  // JoinSink
  void joined(const Operation& operation, const GpuWork& work) override {
    const GpuWork gpu = with_collective(work);
    for (Consumer* c : consumers_) c->on_operation(operation, &gpu);
  }
  void operation_alone(const Operation& operation) override {
    for (Consumer* c : consumers_) c->on_operation(operation, nullptr);
  }
  void activity_alone(const GpuWork& work) override {
    const GpuWork gpu = with_collective(work);
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

  GpuWork with_collective(GpuWork work) const {
    work.collective = collectives_.find(*work.section, work.activity.correlation_id);
    return work;
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
    // Captured work did not run: it has no GPU side to wait for.
    if (op.captured()) operation_alone(op);
    else join_.add(op);
  }

  // Every record once: a held one when its stack is known (or known to be none).
  void dispatch(const Section& section, const RecordView& record, Stacks stacks) {
    switch (record.record_kind()) {
      case RecordKind::kApiCall: each(section, record, stacks, &Consumer::on_call); break;
      case RecordKind::kSynchronize: each(section, record, stacks, &Consumer::on_synchronize); break;
      case RecordKind::kObjectLifecycle: each(section, record, stacks, &Consumer::on_lifecycle); break;
      case RecordKind::kLost: each(section, record, stacks, &Consumer::on_lost); break;
      case RecordKind::kKernelLaunch: add_operation(section, record, stacks, OperationKind::kKernel); break;
      case RecordKind::kMemoryCopy: add_operation(section, record, stacks, OperationKind::kCopy); break;
      case RecordKind::kMemorySet: add_operation(section, record, stacks, OperationKind::kMemset); break;
      case RecordKind::kGraphLaunch: add_operation(section, record, stacks, OperationKind::kGraphLaunch); break;
      case RecordKind::kGraphNode: each(section, record, stacks, &Consumer::on_graph_node); break;
      case RecordKind::kGraphExec: each(section, record, stacks, &Consumer::on_graph_exec); break;
      case RecordKind::kStreamCapture: each(section, record, stacks, &Consumer::on_stream_capture); break;
      case RecordKind::kCollective: each(section, record, stacks, &Consumer::on_collective); break;
      case RecordKind::kCollectiveComm: each(section, record, stacks, &Consumer::on_collective_comm); break;
      case RecordKind::kCollectiveGroup: each(section, record, stacks, &Consumer::on_collective_group); break;
      case RecordKind::kUnattributedGpuWork:
        each(section, record, stacks, &Consumer::on_unattributed_gpu_work);
        break;
      case RecordKind::kGpuActivity: {
        GpuWork work{};
        work.section = &section;
        work.tid = record.tid;
        work.activity = record.as<GpuActivityRecord>();
        join_.add(work);
        break;
      }
      case RecordKind::kMemoryOperation: each(section, record, stacks, &Consumer::on_memory_operation); break;
      case RecordKind::kCaptureWindow:
        if (section.model != nullptr) windows_.on_record(*section.model, record);
        break;
      case RecordKind::kMemoryInfo: each(section, record, stacks, &Consumer::on_memory_info); break;
      case RecordKind::kNvtxEvent: {
        NvtxEvent e{event<NvtxEventRecord>(section, record, stacks), nvtx_inline_message(record.data, record.bytes)};
        for (Consumer* c : consumers_) c->on_nvtx(e);
        break;
      }
      case RecordKind::kApiCount: each(section, record, stacks, &Consumer::on_api_count); break;
      default: break;  // definitions, ThreadBatch
    }
  }

  Interpreter& owner_;
  const std::vector<Consumer*>& consumers_;
  CallStackPairing pairing_;
  CorrelationJoin join_;
  std::function<void(uint64_t, uint64_t)> on_chunk_;
  RecentCollectives collectives_;
  CaptureWindowCollector windows_;
  const Section* section_ = nullptr;
  uint64_t bytes_before_ = 0;
  InterpretResult result_;
};

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
