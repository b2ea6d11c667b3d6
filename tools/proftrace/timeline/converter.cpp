#include "tools/proftrace/timeline/converter.h"

#include "tools/proftrace/timeline/call_stack_pairing.h"
#include "tools/proftrace/timeline/memory_counters.h"
#include "tools/proftrace/timeline/string_table.h"
#include "tools/proftrace/timeline/threaded_sink.h"
#include "tools/proftrace/timeline/track_layout.h"
#include "tools/proftrace/progress.h"
#include "tools/proftrace/record_text.h"

#include <optional>

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

class SliceSink : public JoinSink {
 public:
  explicit SliceSink(SliceWriter& slices) : slices_(slices) {}
  void joined(const HostOperation& operation, const DeviceActivity& activity) override {
    slices_.joined(operation, activity);
  }
  void operation_alone(const HostOperation& operation) override { slices_.operation_alone(operation); }
  void activity_alone(const DeviceActivity& activity) override { slices_.gpu_work_alone(activity); }

 private:
  SliceWriter& slices_;
};

HostOperation with_stack(HostOperation op, CallStackRef stack) {
  op.native_stack = stack.native;
  op.python_stack = stack.python;
  return op;
}

class EventsVisitor : public RecordVisitor {
 public:
  EventsVisitor(TrackLayout& layout, SliceWriter& slices, CorrelationJoin& join,
                MemoryCounters& memory, Progress& progress, TimelineSink& sink,
                uint64_t bytes_before)
      : layout_(layout), slices_(slices), join_(join), memory_(memory), progress_(progress), sink_(sink),
        bytes_before_(bytes_before),
        pairing_([this](SectionContext& section, const RecordView& record, CallStackRef stack) {
          dispatch(section, record, stack);
        }) {}

  void on_chunk(const ChunkInfo& chunk) override {
    section_ = &layout_.section(chunk.section_id);
    progress_.update(bytes_before_ + chunk.file_offset, records_);
  }

  bool keep_going() override { return !sink_.failed(); }

  void on_record(const RecordView& record) override {
    ++records_;
    slices_.note_collective_label(*section_, record);
    if (pairing_.offer(*section_, record)) return;
    dispatch(*section_, record, {});
  }

  // End of an input: records still waiting for a possible CallStack.
  void finish() { pairing_.flush(); }

  // Every record (a held one when its stack is known, or known to be none).
  void dispatch(SectionContext& section, const RecordView& record, CallStackRef stack) {
    switch (record.record_kind()) {
      case RecordKind::kApiCall:
        slices_.api_call(section, record.tid, record.as<ApiCallRecord>(), stack);
        break;
      case RecordKind::kSynchronize:
        slices_.synchronize(section, record.tid, record.as<SynchronizeRecord>(), stack);
        break;
      case RecordKind::kObjectLifecycle: {
        const auto lifecycle = record.as<ObjectLifecycleRecord>();
        if (lifecycle.object == static_cast<uint8_t>(ObjectKind::kStream) &&
            lifecycle.action == static_cast<uint8_t>(LifecycleAction::kCreate))
          layout_.note_stream_id(section, lifecycle.handle, lifecycle.id);
        slices_.lifecycle(section, record.tid, lifecycle, stack);
        break;
      }
      case RecordKind::kLost: slices_.lost(section, record.tid, record.as<LostRecord>()); break;
      case RecordKind::kKernelLaunch: {
        HostOperation op{&section, record.tid, RecordKind::kKernelLaunch, {}};
        op.launch = record.as<KernelLaunchRecord>();
        add_operation(with_stack(op, stack));
        break;
      }
      case RecordKind::kMemoryCopy: {
        HostOperation op{&section, record.tid, RecordKind::kMemoryCopy, {}};
        op.copy = record.as<MemoryCopyRecord>();
        add_operation(with_stack(op, stack));
        break;
      }
      case RecordKind::kMemorySet: {
        HostOperation op{&section, record.tid, RecordKind::kMemorySet, {}};
        op.set = record.as<MemorySetRecord>();
        add_operation(with_stack(op, stack));
        break;
      }
      case RecordKind::kGraphLaunch: {
        HostOperation op{&section, record.tid, RecordKind::kGraphLaunch, {}};
        op.graph_launch = record.as<GraphLaunchRecord>();
        add_operation(with_stack(op, stack));
        memory_.on_record(record);  // a graph's memory is taken at its first launch
        break;
      }
      case RecordKind::kGraphNode:
        slices_.graph_node(section, record.as<GraphNodeRecord>());
        memory_.on_record(record);
        break;
      case RecordKind::kGraphExec:
        slices_.graph_exec(section, record.tid, record.as<GraphExecRecord>(), stack);
        memory_.on_record(record);
        break;
      case RecordKind::kStreamCapture:
        slices_.stream_capture(section, record.tid, record.as<StreamCaptureRecord>(), stack);
        break;
      case RecordKind::kCollective:
        slices_.collective(section, record.tid, record.as<CollectiveRecord>(), stack);
        break;
      case RecordKind::kCollectiveComm: {
        const auto comm = record.as<CollectiveCommRecord>();
        if ((comm.span.flags & kApiCarried) == 0) slices_.collective_comm(section, record.tid, comm, stack);
        break;
      }
      case RecordKind::kCollectiveGroup:
        slices_.collective_group(section, record.tid, record.as<CollectiveGroupRecord>(), stack);
        break;
      case RecordKind::kUnattributedGpuWork:
        slices_.unattributed_gpu_work(section, record.tid, record.as<UnattributedGpuWorkRecord>());
        break;
      case RecordKind::kGpuActivity:
        join_.add(DeviceActivity{&section, record.tid, record.as<GpuActivityRecord>()});
        break;
      case RecordKind::kMemoryOperation: {
        // A block carried into a capture window is live memory, not a call.
        const auto operation = record.as<MemoryOperationRecord>();
        if ((operation.span.flags & kApiCarried) == 0)
          slices_.memory_operation(section, record.tid, operation, stack);
        memory_.on_record(record);
        break;
      }
      case RecordKind::kCaptureWindow:
        if (section.model != nullptr) windows_.on_record(*section.model, record);
        break;
      case RecordKind::kMemoryInfo:
        slices_.memory_info(section, record.tid, record.as<MemoryInfoRecord>(), stack);
        memory_.on_record(record);
        break;
      case RecordKind::kNvtxEvent:
        slices_.nvtx_event(section, record.tid, record.as<NvtxEventRecord>(),
                           nvtx_inline_message(record.data, record.bytes));
        break;
      default: break;  // definitions, ThreadBatch
    }
  }

  uint64_t records() const { return records_; }
  const CaptureWindowCollector& windows() const { return windows_; }

 private:
  // Captured work did not run: it has no GPU side to wait for.
  void add_operation(const HostOperation& op) {
    slices_.nvtx_note_operation(*op.section, op.tid, op.span());
    if (op.span().flags & kApiCaptured) slices_.operation_alone(op);
    else join_.add(op);
  }

  TrackLayout& layout_;
  SliceWriter& slices_;
  CorrelationJoin& join_;
  MemoryCounters& memory_;
  Progress& progress_;
  TimelineSink& sink_;
  uint64_t bytes_before_;
  SectionContext* section_ = nullptr;
  uint64_t records_ = 0;
  CallStackPairing pairing_;
  CaptureWindowCollector windows_;
};

}  // namespace

bool convert(std::vector<InputTrace>& inputs, const TraceModel& model, TimelineSink& output,
             const ConvertOptions& options, ConvertResult* result, std::string* error) {
  std::optional<ThreadedSink> threaded;
  if (options.writer_thread) threaded.emplace(output);
  TimelineSink& sink = threaded ? static_cast<TimelineSink&>(*threaded) : output;
  // Several hosts: align their clocks before anything is placed (a first
  // pass over the events collects the collectives that end together).
  HostClockOffsets offsets = HostClockOffsets::from_snapshots(model);
  if (offsets.host_count() > 1) {
    CollectiveEndCollector collector(model);
    for (auto& input : inputs) input.reader->read(collector, ChunkSelection::kEventsOnly);
    offsets.refine_with_collective_ends(collector.samples());
  }
  StringTable strings;
  TrackLayout layout(model, sink, strings, &offsets);
  const TraceMetadata metadata = trace_metadata(model);
  sink.begin(TimelineInfo{layout.base_ns(), &metadata});
  layout.write_host_metadata();
  SliceWriter slices(layout);
  slices.set_stacks(options.stacks);
  SliceSink join_sink(slices);
  CorrelationJoin join(join_sink, options.join_window);
  MemoryCounters memory(layout);

  uint64_t total_bytes = 0;
  for (const auto& input : inputs) total_bytes += input.reader->file_bytes();
  Progress progress(options.show_progress, "converting", total_bytes);

  uint64_t bytes_before = 0;
  for (auto& input : inputs) {
    EventsVisitor visitor(layout, slices, join, memory, progress, sink, bytes_before);
    input.events_report = input.reader->read(visitor, ChunkSelection::kEventsOnly);
    visitor.finish();
    const std::vector<CaptureWindow> windows = visitor.windows().finish(model);
    slices.capture_windows(layout, windows);
    result->windows.insert(result->windows.end(), windows.begin(), windows.end());
    result->records_read += visitor.records();
    bytes_before += input.reader->file_bytes();
  }
  join.finish();
  slices.finish_nvtx();
  memory.finish();
  progress.finish();

  const bool finished = sink.finish(error);
  result->events_written = sink.events();
  result->output_bytes = sink.bytes();
  result->gpu_processes = layout.gpu_process_count();
  result->slices = slices.stats();
  result->join = join.stats();
  result->memory_counter_events = memory.counter_events();
  return finished;
}

}  // namespace proflaunch::tools::timeline
