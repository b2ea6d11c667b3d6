#include "tools/proftrace/timeline/converter.h"

#include "tools/proftrace/interpret/interpreter.h"
#include "tools/proftrace/timeline/gpu_metric_counters.h"
#include "tools/proftrace/timeline/memory_counters.h"
#include "tools/proftrace/timeline/string_table.h"
#include "tools/proftrace/timeline/threaded_sink.h"
#include "tools/proftrace/timeline/track_layout.h"
#include "tools/proftrace/progress.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stats/step_detection.h"

#include <optional>

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

CallStackRef stack_of(interpret::Stacks stacks) { return CallStackRef{stacks.native, stacks.python}; }

// The timeline's side of the interpretation pass: each event to the slice
// writer, the track layout and the memory counters, with its section's
// timeline context.
class TimelineConsumer final : public interpret::Consumer {
 public:
  TimelineConsumer(TrackLayout& layout, SliceWriter& slices, TimelineSink& sink)
      : layout_(layout), slices_(slices), sink_(sink) {}

  bool keep_going() override { return !sink_.failed(); }

  void on_call(const interpret::Event<ApiCallRecord>& e) override {
    slices_.api_call(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_synchronize(const interpret::SynchronizeEvent& e) override {
    slices_.synchronize(context(e.section), e.tid, e.record, stack_of(e.stacks), e.recorded);
  }
  void on_lifecycle(const interpret::Event<ObjectLifecycleRecord>& e) override {
    SectionContext& section = context(e.section);
    if (e.record.object == static_cast<uint8_t>(ObjectKind::kStream) &&
        e.record.action == static_cast<uint8_t>(LifecycleAction::kCreate))
      layout_.note_stream_id(section, e.record.handle, e.record.id);
    slices_.lifecycle(section, e.tid, e.record, stack_of(e.stacks));
  }
  void on_lost(const interpret::Event<LostRecord>& e) override { slices_.lost(context(e.section), e.tid, e.record); }
  void on_graph_node(const interpret::Event<GraphNodeRecord>& e) override {
    slices_.graph_node(context(e.section), e.record);
  }
  void on_graph_exec(const interpret::Event<GraphExecRecord>& e) override {
    slices_.graph_exec(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_stream_capture(const interpret::Event<StreamCaptureRecord>& e) override {
    slices_.stream_capture(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_collective(const interpret::Event<CollectiveRecord>& e) override {
    slices_.collective(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_collective_comm(const interpret::Event<CollectiveCommRecord>& e) override {
    if ((e.record.span.flags & kApiCarried) == 0)
      slices_.collective_comm(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_collective_group(const interpret::Event<CollectiveGroupRecord>& e) override {
    slices_.collective_group(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_unattributed_gpu_work(const interpret::Event<UnattributedGpuWorkRecord>& e) override {
    slices_.unattributed_gpu_work(context(e.section), e.tid, e.record);
  }
  void on_memory_operation(const interpret::Event<MemoryOperationRecord>& e) override {
    // A block carried into a capture window is live memory, not a call.
    if ((e.record.span.flags & kApiCarried) == 0)
      slices_.memory_operation(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_memory_info(const interpret::Event<MemoryInfoRecord>& e) override {
    slices_.memory_info(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_nvtx(const interpret::NvtxEvent& e) override {
    slices_.nvtx_event(context(e.section), e.tid, e.record, e.inline_message);
  }
  void on_cpu_sample(const interpret::CpuSampleEvent& e) override {
    slices_.cpu_sample(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_blocking_call(const interpret::BlockingCallEvent& e) override {
    slices_.blocking_call(context(e.section), e.tid, e.record, stack_of(e.stacks));
  }
  void on_operation_read(const interpret::Operation& op) override {
    slices_.nvtx_note_operation(context(op.section), op.tid, op.span());
  }
  void on_operation(const interpret::Operation& op, const interpret::GpuWork* gpu) override {
    const HostOperation host = host_operation(op);
    if (gpu == nullptr) slices_.operation_alone(host);
    else if (gpu->activity.graph_node != 0) slices_.graph_replay_node(host, device_activity(*gpu), /*first=*/true);
    else slices_.joined(host, device_activity(*gpu));
  }
  void on_gpu_work_alone(const interpret::GpuWork& gpu) override { slices_.gpu_work_alone(device_activity(gpu)); }
  void on_more_gpu_work(const interpret::Operation& op, const interpret::GpuWork& gpu) override {
    slices_.graph_replay_node(host_operation(op), device_activity(gpu), /*first=*/false);
  }
  void on_nodes_done(const interpret::Operation& op) override { slices_.graph_replay_done(host_operation(op)); }
  void on_input_end(const std::vector<CaptureWindow>& windows) override {
    slices_.capture_windows(layout_, windows);
    windows_.insert(windows_.end(), windows.begin(), windows.end());
  }

  // Each input's windows, input after input.
  const std::vector<CaptureWindow>& windows() const { return windows_; }

 private:
  SectionContext& context(const interpret::Section* section) {
    if (section->index >= contexts_.size()) contexts_.resize(section->index + 1, nullptr);
    SectionContext*& context = contexts_[section->index];
    if (context == nullptr) context = &layout_.section(section->id);
    return *context;
  }
  HostOperation host_operation(const interpret::Operation& op) { return HostOperation(op, context(op.section)); }
  DeviceActivity device_activity(const interpret::GpuWork& gpu) { return DeviceActivity(gpu, context(gpu.section)); }

  TrackLayout& layout_;
  SliceWriter& slices_;
  TimelineSink& sink_;
  std::vector<SectionContext*> contexts_;  // by interpret::Section::index
  std::vector<CaptureWindow> windows_;
};

// The reference host's wall-clock offset, as the clock alignment took it:
// from the first section of that host with a snapshot.
std::optional<int64_t> reference_wall_offset(const TraceModel& model, const HostClockOffsets& offsets) {
  for (const SectionModel* section : model.ordered()) {
    if (!section->process || section->host() != offsets.reference_host()) continue;
    return static_cast<int64_t>(section->process->realtime_ns - section->process->monotonic_ns);
  }
  return std::nullopt;
}

}  // namespace

bool convert(std::vector<InputTrace>& inputs, const TraceModel& model, TimelineSink& output,
             const ConvertOptions& options, ConvertResult* result, std::string* error) {
  std::optional<ThreadedSink> threaded;
  if (options.writer_thread) threaded.emplace(output);
  TimelineSink& sink = threaded ? static_cast<TimelineSink&>(*threaded) : output;
  // Several hosts: align their clocks before anything is placed.
  HostClockOffsets offsets = align_host_clocks(inputs, model);
  StringTable strings;
  TrackLayout layout(model, sink, strings, &offsets);
  const TraceMetadata metadata = trace_metadata(model);
  sink.begin(TimelineInfo{layout.base_ns(), &metadata, reference_wall_offset(model, offsets)});
  layout.write_host_metadata();
  SliceWriter slices(layout);
  slices.set_stacks(options.stacks);
  slices.set_annotations_on_streams(options.annotations_on_streams);
  MemoryCounters memory(layout);
  GpuMetricCounters device_metrics(layout);

  uint64_t total_bytes = 0;
  for (const auto& input : inputs) total_bytes += input.reader->file_bytes();
  Progress progress(options.show_progress, "converting", total_bytes);

  TimelineConsumer timeline(layout, slices, sink);
  interpret::InterpretOptions interpret_options;
  interpret_options.join_window = options.join_window;
  interpret_options.on_chunk = [&](uint64_t bytes, uint64_t records) { progress.update(bytes, records); };
  // The steps stats finds, found the same way, for Kineto's ProfilerStep#N.
  stats::StepDetector steps(options.step_range);
  interpret::Interpreter interpreter(model, {&timeline, &memory, &steps, &device_metrics}, interpret_options);
  const interpret::InterpretResult interpreted = interpreter.run(inputs);
  result->windows = timeline.windows();
  result->records_read = interpreted.records_read;
  slices.release_held_gpu_work();
  slices.finish_nvtx();
  std::string method;
  const std::vector<stats::Step> found = steps.find_steps(&method);
  if (!found.empty()) {
    const auto& origin = steps.origin();
    slices.profiler_steps(layout.section(origin.section), origin.tid, found, origin.source);
    result->profiler_steps = found.size();
  }
  memory.finish();
  progress.finish();

  const bool finished = sink.finish(error);
  result->events_written = sink.events();
  result->output_bytes = sink.bytes();
  result->gpu_processes = layout.gpu_process_count();
  result->slices = slices.stats();
  result->join = interpreted.join;
  result->memory_counter_events = memory.counter_events();
  return finished;
}

}  // namespace proflaunch::tools::timeline
