#include "tools/proftrace/timeline/slice_writer.h"

#include <string>

#include "tools/proftrace/timeline/operation_args.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

SliceWriter::ApiPlacement SliceWriter::place_api(SectionContext& section, uint32_t tid,
                                                 const ApiSpan& span) {
  ApiPlacement placement{layout_.host_tid(section, tid), layout_.timeline_ns(section, span.begin_ns),
                         layout_.timeline_ns(section, span.end_ns), 0};
  if (placement.end_ns < placement.begin_ns) {
    ++stats_.negative_durations;
    placement.end_ns = placement.begin_ns;
  }
  const uint64_t thread_key = static_cast<uint64_t>(section.pid) << 32 | placement.tid;
  auto [last, first_on_thread] =
      last_on_thread_.try_emplace(thread_key, LastSlice{placement.begin_ns, placement.end_ns});
  if (!first_on_thread) {
    // Starts inside the previous call and ends after it: a partial overlap
    // the importer cannot nest (clock jitter between hooks). Start it where
    // the previous one ended.
    if (placement.begin_ns > last->second.begin_ns && placement.begin_ns < last->second.end_ns &&
        placement.end_ns > last->second.end_ns) {
      placement.adjusted_ns = difference_ns(last->second.end_ns, placement.begin_ns);
      placement.begin_ns = last->second.end_ns;
      ++stats_.api_overlaps_adjusted;
    }
    last->second = LastSlice{placement.begin_ns, placement.end_ns};
  }
  return placement;
}

void SliceWriter::begin_slice(TrackRef track, int64_t begin_ns, int64_t end_ns, Str category, Str name) {
  slice_ = Slice{};
  slice_.track = track;
  slice_.begin_ns = begin_ns;
  slice_.end_ns = end_ns;
  slice_.category = category;
  slice_.name = name;
  args_.clear();
  slice_.args = &args_;
}

void SliceWriter::begin_api_slice(SectionContext& section, const ApiPlacement& placement, const ApiSpan& span,
                                  uint64_t flow_id, CallStackRef stack, const char* correlation_key) {
  const auto& label = section.api_label(span.api);
  ++stats_.api_slices;
  begin_slice(TrackRef{section.pid, placement.tid}, placement.begin_ns, placement.end_ns, label.category, label.name);
  slice_.flow_out = flow_id;
  args_.add_uint(correlation_key, span.correlation_id);
  if (span.result != 0) args_.add_int("result", span.result);
  if (span.flags & kApiAsync) args_.add_bool("async", true);
  if (span.flags & kApiPerThreadStream) args_.add_bool("per_thread_default_stream", true);
  // Its work became a graph node and did not run (a launch, copy, memset,
  // stream-ordered allocation or free on a capturing stream).
  if (span.flags & kApiCaptured) args_.add_bool("captured", true);
  if (placement.adjusted_ns != 0) args_.add_int("begin_adjusted_ns", placement.adjusted_ns);
  if (stacks_ && !stack.empty() && section.model != nullptr) {
    slice_.stack = StackRef{section.model, span.api, stack};
    args_.add_stack();
  }
}

void SliceWriter::api_call(SectionContext& section, uint32_t tid, const ApiCallRecord& record,
                           CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  // An event record: the event and its stream, as a wait on it names them.
  if (record.event != 0) {
    if (record.stream != 0) args_.add_string("target_stream", section.stream_text(record.stream));
    args_.add_text("event", hex(record.event));
  }
  emit();
}

void SliceWriter::synchronize(SectionContext& section, uint32_t tid, const SynchronizeRecord& record,
                              CallStackRef stack, const interpret::EventRecorded* recorded) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  args_.add_string("target", intern(sync_target_name(record.target)));
  add_device(args_, "device", record.device);
  if (record.stream != 0) args_.add_string("target_stream", section.stream_text(record.stream));
  if (record.event != 0) args_.add_text("event", hex(record.event));
  emit();
  cuda_sync(section, tid, record, recorded);
}

void SliceWriter::memory_operation(SectionContext& section, uint32_t tid, const MemoryOperationRecord& record,
                                   CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  args_.add_string("memory", intern(allocation_kind_name(record.kind)));
  args_.add_string("action", intern(memory_action_name(record.action)));
  if (record.address != 0) args_.add_text("address", hex(record.address));
  if (record.bytes != 0) args_.add_uint("bytes", record.bytes);
  add_device(args_, "device", record.device);
  if (record.stream != 0) args_.add_string("target_stream", section.stream_text(record.stream));
  if (record.handle != 0) args_.add_text("handle", hex(record.handle));
  emit();
}

void SliceWriter::memory_info(SectionContext& section, uint32_t tid, const MemoryInfoRecord& record,
                              CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  add_device(args_, "device", record.device);
  args_.add_uint("free_bytes", record.free_bytes);
  args_.add_uint("total_bytes", record.total_bytes);
  emit();
}

void SliceWriter::lifecycle(SectionContext& section, uint32_t tid, const ObjectLifecycleRecord& record,
                            CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  args_.add_string("object", intern(object_kind_name(record.object)));
  args_.add_string("action", intern(lifecycle_action_name(record.action)));
  args_.add_text("handle", hex(record.handle));
  add_device(args_, "device", record.device);
  if (record.id != 0) args_.add_uint("id", record.id);
  if (record.object == static_cast<uint8_t>(ObjectKind::kStream)) {
    args_.add_uint("flags", record.flags);
    args_.add_int("priority", record.priority);
  }
  emit();
}

void SliceWriter::lost(SectionContext& section, uint32_t tid, const LostRecord& record) {
  ++stats_.lost_markers;
  stats_.lost_records += record.count;
  name_ = "LOST " + std::to_string(record.count) + " records (" + lost_reason_name(record.reason) + ")";
  args_.clear();
  args_.add_uint("count", record.count);
  args_.add_string("reason", intern(lost_reason_name(record.reason)));
  args_.add_uint("window_ns", record.last_ns >= record.first_ns ? record.last_ns - record.first_ns : 0);
  out_.instant(Instant{TrackRef{section.pid, layout_.host_tid(section, tid)},
                       layout_.timeline_ns(section, record.first_ns), InstantScope::kProcess, intern("proflaunch"),
                       Str{name_, 0}, &args_, false, {}});
}

void SliceWriter::capture_windows(TrackLayout& layout, const std::vector<CaptureWindow>& windows) {
  for (const CaptureWindow& window : windows) {
    SectionContext& section = layout.section(window.section_id);
    const uint32_t track = layout.capture_track(section);  // declares the track first
    const int64_t begin = layout.timeline_ns(section, window.begin_ns);
    const int64_t end = layout.timeline_ns(section, window.end_ns);
    name_ = "capture " + window.label();
    begin_slice(TrackRef{section.pid, track}, begin, end > begin ? end : begin, intern("proflaunch"), Str{name_, 0});
    args_.add_uint("window", window.index);
    args_.add_string("opened_by", intern(capture_trigger_name(window.opened_by)));
    args_.add_string("closed_by",
                     intern(window.ended ? capture_trigger_name(window.closed_by) : "end of the process"));
    if (!window.name.empty()) args_.add_text("name", window.name);
    if (window.steps) {
      args_.add_uint("first_step", window.first_step);
      args_.add_uint("last_step", window.last_step);
    }
    emit();
  }
}

void SliceWriter::write_operation(const HostOperation& op, const ApiPlacement& placement, uint64_t flow_id) {
  SectionContext& section = *op.context;
  begin_api_slice(section, placement, op.span(), flow_id, CallStackRef{op.stacks.native, op.stacks.python});
  switch (op.kind) {
    case interpret::OperationKind::kKernel: {
      const auto& launch = op.launch;
      if (launch.launch_flags & kLaunchHostFunction) {
        args_.add_string("host_function", section.host_function_name(launch.function, launch.span.begin_ns));
        args_.add_string("target_stream", section.stream_text(launch.stream));
        add_device(args_, "device", launch.device);
        break;
      }
      args_.add_string("kernel", section.kernel_name(launch.function, launch.span.begin_ns));
      args_.add_dim3("grid", launch.grid);
      args_.add_dim3("block", launch.block);
      args_.add_uint("shared_bytes", launch.dynamic_shared_bytes);
      args_.add_string("target_stream", section.stream_text(launch.stream));
      add_device(args_, "device", launch.device);
      if (launch.launch_flags & kLaunchCooperative) args_.add_bool("cooperative", true);
      break;
    }
    case interpret::OperationKind::kCopy: {
      const auto& copy = op.copy;
      args_.add_uint("bytes", copy.bytes);
      args_.add_string("direction", intern(copy_direction_name(copy.direction)));
      args_.add_string("src_kind", intern(memory_kind_name(copy.src_kind)));
      args_.add_string("dst_kind", intern(memory_kind_name(copy.dst_kind)));
      args_.add_string("target_stream", section.stream_text(copy.stream));
      add_device(args_, "device", copy.device);
      if (copy.direction == static_cast<uint8_t>(CopyDirection::kPeer)) add_device(args_, "peer_device", copy.peer_device);
      add_copy_devices(args_, copy);
      break;
    }
    case interpret::OperationKind::kGraphLaunch: {
      add_graph_args(section, op.graph_launch.graph_exec);
      args_.add_string("target_stream", section.stream_text(op.graph_launch.stream));
      add_device(args_, "device", op.graph_launch.device);
      break;
    }
    default: {
      const auto& set = op.set;
      args_.add_uint("bytes", set.bytes);
      args_.add_uint("value", set.value);
      args_.add_uint("element_bytes", set.element_bytes);
      args_.add_string("dst_kind", intern(memory_kind_name(set.dst_kind)));
      args_.add_string("target_stream", section.stream_text(set.stream));
      add_device(args_, "device", set.device);
      break;
    }
  }
  emit();
}

void SliceWriter::add_graph_args(SectionContext& section, uint64_t graph_exec) {
  args_.add_text("graph_exec", hex(graph_exec));
  const auto found = section.graphs.find(graph_exec);
  if (found == section.graphs.end()) return;
  const SectionContext::GraphSummary& graph = found->second;
  args_.add_uint("nodes", graph.nodes);
  args_.add_uint("kernels", graph.kernels);
  list_.clear();
  for (uint64_t function : graph.first_kernels) list_.push_back(section.kernel_name(function, graph.defined_ns));
  args_.add_list(graph.kernels > graph.first_kernels.size() ? "first_kernel_names" : "kernel_names", list_.data(),
                 list_.size());
}

void SliceWriter::graph_node(SectionContext& section, const GraphNodeRecord& record) {
  SectionContext::GraphSummary& graph = section.graphs[record.graph_exec];
  // A handle reused by a later instantiation: its nodes replace the old ones.
  if (graph.instantiated) graph = SectionContext::GraphSummary{};
  ++graph.nodes;
  if (record.type == static_cast<uint8_t>(GraphNodeType::kKernel)) {
    ++graph.kernels;
    if (graph.first_kernels.size() < SectionContext::kMaxListedKernels) graph.first_kernels.push_back(record.function);
  }
}

void SliceWriter::graph_exec(SectionContext& section, uint32_t tid, const GraphExecRecord& record, CallStackRef stack) {
  if (record.action == static_cast<uint8_t>(GraphExecAction::kInstantiate)) {
    auto found = section.graphs.find(record.graph_exec);
    if (found != section.graphs.end()) {
      found->second.defined_ns = record.span.end_ns;
      found->second.instantiated = true;
    }
  }
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  args_.add_string("action", intern(graph_exec_action_name(record.action)));
  if (record.graph_exec != 0) add_graph_args(section, record.graph_exec);
  if (record.graph != 0) args_.add_text("graph", hex(record.graph));
  if (record.stream != 0) args_.add_string("target_stream", section.stream_text(record.stream));
  // Kept after a destroy: the launches' GPU work may be read after it.
  emit();
}

void SliceWriter::stream_capture(SectionContext& section, uint32_t tid, const StreamCaptureRecord& record,
                                 CallStackRef stack) {
  begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  args_.add_string("target_stream", section.stream_text(record.stream));
  if (record.capture_id != 0) args_.add_uint("capture_id", record.capture_id);
  if (record.graph != 0) args_.add_text("graph", hex(record.graph));
  if (record.mode != kCaptureModeUnknown) args_.add_string("mode", intern(capture_mode_name(record.mode)));
  emit();
  const auto key = std::make_pair(tid, record.stream);
  if (record.action == static_cast<uint8_t>(CaptureAction::kBegin)) {
    if (record.span.result == 0) section.open_captures[key] = SectionContext::OpenCapture{record.span.end_ns, record.mode};
    return;
  }
  const auto open = section.open_captures.find(key);
  if (open == section.open_captures.end()) return;
  // The capture itself, on the capturing thread: from the begin call's
  // return to the end call's start; the captured calls nest inside it.
  const int64_t begin_ns = layout_.timeline_ns(section, open->second.begun_ns);
  const int64_t end_ns = layout_.timeline_ns(section, record.span.begin_ns);
  if (end_ns >= begin_ns) {
    begin_slice(TrackRef{section.pid, layout_.host_tid(section, tid)}, begin_ns, end_ns, intern("capture"),
                intern("Stream capture"));
    args_.add_string("target_stream", section.stream_text(record.stream));
    if (open->second.mode != kCaptureModeUnknown) args_.add_string("mode", intern(capture_mode_name(open->second.mode)));
    if (record.capture_id != 0) args_.add_uint("capture_id", record.capture_id);
    args_.add_text("result", record.span.result == 0 ? "graph " + hex(record.graph)
                                                     : "failed (" + std::to_string(record.span.result) + ")");
    emit();
    ++stats_.api_slices;
  }
  section.open_captures.erase(open);
}

void SliceWriter::operation_alone(const HostOperation& op) {
  write_operation(op, place_api(*op.context, op.tid, op.span()), 0);
  nvtx_operation_done(op, nullptr);
}

void SliceWriter::gpu_work_alone(const DeviceActivity& activity) {
  release_passed(nullptr, activity);
  write_gpu_work(nullptr, activity, place_gpu(nullptr, activity), 0);
}

uint64_t SliceWriter::flow_if(bool forward) {
  if (!forward) {
    ++stats_.flows_dropped_backwards;
    return 0;
  }
  ++stats_.flows;
  return next_flow_id_++;
}

void SliceWriter::joined(const HostOperation& op, const DeviceActivity& activity) {
  release_passed(&op, activity);
  if (!annotations_on_streams_) nvtx_operation_done(op, &activity);
  const ApiPlacement api = place_api(*op.context, op.tid, op.span());
  if (held_for_stream_order(op, activity)) {
    // The arrow as below: a placement only moves later, and a collective's
    // kernel not before its call.
    const uint64_t flow_id = flow_if(activity.collective != nullptr ||
                                     layout_.timeline_ns(*activity.context, activity.activity.start_ns) >= api.begin_ns);
    write_operation(op, api, flow_id);
    hold(op, activity, api.begin_ns, flow_id);
    return;
  }
  const GpuWork gpu = place_gpu(&op, activity, api.begin_ns);
  if (annotations_on_streams_) nvtx_operation_done(op, &activity, &gpu.placement);
  const uint64_t flow_id = flow_if(gpu.placement.start_ns >= api.begin_ns);
  write_operation(op, api, flow_id);
  write_gpu_work(&op, activity, gpu, flow_id);
}

}  // namespace proflaunch::tools::timeline
