#include "tools/proftrace/perfetto_json/slice_writer.h"

#include <string>

#include "tools/proftrace/perfetto_json/json_args.h"
#include "tools/proftrace/perfetto_json/stack_args.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::perfetto_json {

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

JsonWriter& SliceWriter::begin_api_slice(SectionContext& section, const ApiPlacement& placement,
                                         const ApiSpan& span, uint64_t flow_id, CallStackRef stack) {
  const auto& label = section.api_label(span.api);
  JsonWriter& w = out_.next_event();
  ++stats_.api_slices;
  w.raw("{\"ph\":\"X\",\"cat\":\"");
  w.raw(label.category);
  w.raw("\",\"name\":");
  w.raw(label.json_name);
  w.raw(",\"pid\":");
  w.number(section.pid);
  w.raw(",\"tid\":");
  w.number(placement.tid);
  w.raw(",\"ts\":");
  w.microseconds(placement.begin_ns);
  w.raw(",\"dur\":");
  w.microseconds(difference_ns(placement.end_ns, placement.begin_ns));
  if (flow_id != 0) {
    w.raw(",\"bind_id\":");
    w.number(flow_id);
    w.raw(",\"flow_out\":true");
  }
  w.raw(",\"args\":{\"correlation_id\":");
  w.number(span.correlation_id);
  if (span.result != 0) write_number_arg(w, "result", span.result);
  if (span.flags & kApiAsync) w.raw(",\"async\":true");
  if (span.flags & kApiPerThreadStream) w.raw(",\"per_thread_default_stream\":true");
  // Its work became a graph node and did not run (a launch, copy, memset,
  // stream-ordered allocation or free on a capturing stream).
  if (span.flags & kApiCaptured) w.raw(",\"captured\":true");
  if (placement.adjusted_ns != 0) write_number_arg(w, "begin_adjusted_ns", placement.adjusted_ns);
  if (stack_args_ != nullptr && !stack.empty() && section.model != nullptr) {
    const std::string& text = stack_args_->json(*section.model, span.api, stack);
    if (!text.empty()) write_json_arg(w, "stack", text);
  }
  return w;
}

void SliceWriter::api_call(SectionContext& section, uint32_t tid, const ApiCallRecord& record,
                           CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  w.raw("}}");
}

void SliceWriter::synchronize(SectionContext& section, uint32_t tid, const SynchronizeRecord& record,
                              CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_string_arg(w, "target", sync_target_name(record.target));
  write_number_arg(w, "device", record.device);
  if (record.stream != 0) write_json_arg(w, "stream", section.stream_json_text(record.stream));
  if (record.event != 0) write_string_arg(w, "event", hex(record.event));
  w.raw("}}");
}

void SliceWriter::memory_operation(SectionContext& section, uint32_t tid, const MemoryOperationRecord& record,
                                   CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_string_arg(w, "memory", allocation_kind_name(record.kind));
  write_string_arg(w, "action", memory_action_name(record.action));
  if (record.address != 0) write_string_arg(w, "address", hex(record.address));
  if (record.bytes != 0) write_number_arg(w, "bytes", record.bytes);
  write_number_arg(w, "device", record.device);
  if (record.stream != 0) write_json_arg(w, "stream", section.stream_json_text(record.stream));
  if (record.handle != 0) write_string_arg(w, "handle", hex(record.handle));
  w.raw("}}");
}

void SliceWriter::memory_info(SectionContext& section, uint32_t tid, const MemoryInfoRecord& record,
                              CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_number_arg(w, "device", record.device);
  write_number_arg(w, "free_bytes", record.free_bytes);
  write_number_arg(w, "total_bytes", record.total_bytes);
  w.raw("}}");
}

void SliceWriter::lifecycle(SectionContext& section, uint32_t tid, const ObjectLifecycleRecord& record,
                            CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_string_arg(w, "object", object_kind_name(record.object));
  write_string_arg(w, "action", lifecycle_action_name(record.action));
  write_string_arg(w, "handle", hex(record.handle));
  write_number_arg(w, "device", record.device);
  if (record.id != 0) write_number_arg(w, "id", record.id);
  if (record.object == static_cast<uint8_t>(ObjectKind::kStream)) {
    write_number_arg(w, "flags", record.flags);
    write_number_arg(w, "priority", record.priority);
  }
  w.raw("}}");
}

void SliceWriter::lost(SectionContext& section, uint32_t tid, const LostRecord& record) {
  JsonWriter& w = out_.next_event();
  ++stats_.lost_markers;
  stats_.lost_records += record.count;
  w.raw("{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"proflaunch\",\"name\":");
  w.quoted("LOST " + std::to_string(record.count) + " records (" + lost_reason_name(record.reason) + ")");
  w.raw(",\"pid\":");
  w.number(section.pid);
  w.raw(",\"tid\":");
  w.number(layout_.host_tid(section, tid));
  w.raw(",\"ts\":");
  w.microseconds(layout_.timeline_ns(section, record.first_ns));
  w.raw(",\"args\":{");
  w.raw("\"count\":");
  w.number(record.count);
  write_string_arg(w, "reason", lost_reason_name(record.reason));
  write_number_arg(w, "window_ns", record.last_ns >= record.first_ns ? record.last_ns - record.first_ns : 0);
  w.raw("}}");
}

void SliceWriter::capture_windows(TrackLayout& layout, const std::vector<CaptureWindow>& windows) {
  for (const CaptureWindow& window : windows) {
    SectionContext& section = layout.section(window.section_id);
    const uint32_t track = layout.capture_track(section);  // names the track first
    JsonWriter& w = out_.next_event();
    const int64_t begin = layout.timeline_ns(section, window.begin_ns);
    const int64_t end = layout.timeline_ns(section, window.end_ns);
    w.raw("{\"ph\":\"X\",\"cat\":\"proflaunch\",\"name\":");
    w.quoted("capture " + window.label());
    w.raw(",\"pid\":");
    w.number(section.pid);
    w.raw(",\"tid\":");
    w.number(track);
    w.raw(",\"ts\":");
    w.microseconds(begin);
    w.raw(",\"dur\":");
    w.microseconds(end > begin ? end - begin : 0);
    w.raw(",\"args\":{");
    w.raw("\"window\":");
    w.number(window.index);
    write_string_arg(w, "opened_by", capture_trigger_name(window.opened_by));
    write_string_arg(w, "closed_by", window.ended ? capture_trigger_name(window.closed_by) : "end of the process");
    if (!window.name.empty()) write_string_arg(w, "name", window.name);
    if (window.steps) {
      write_number_arg(w, "first_step", window.first_step);
      write_number_arg(w, "last_step", window.last_step);
    }
    w.raw("}}");
  }
}

void SliceWriter::write_operation(const HostOperation& op, const ApiPlacement& placement, uint64_t flow_id) {
  SectionContext& section = *op.section;
  JsonWriter& w = begin_api_slice(section, placement, op.span(), flow_id,
                                  CallStackRef{op.native_stack, op.python_stack});
  switch (op.kind) {
    case RecordKind::kKernelLaunch: {
      const auto& launch = op.launch;
      if (launch.launch_flags & kLaunchHostFunction) {
        write_json_arg(w, "host_function", section.kernel_json_name(launch.function, launch.span.begin_ns));
        write_json_arg(w, "stream", section.stream_json_text(launch.stream));
        write_number_arg(w, "device", launch.device);
        break;
      }
      write_json_arg(w, "kernel", section.kernel_json_name(launch.function, launch.span.begin_ns));
      write_dim3_arg(w, "grid", launch.grid);
      write_dim3_arg(w, "block", launch.block);
      write_number_arg(w, "shared_bytes", launch.dynamic_shared_bytes);
      write_json_arg(w, "stream", section.stream_json_text(launch.stream));
      write_number_arg(w, "device", launch.device);
      if (launch.launch_flags & kLaunchCooperative) w.raw(",\"cooperative\":true");
      break;
    }
    case RecordKind::kMemoryCopy: {
      const auto& copy = op.copy;
      write_number_arg(w, "bytes", copy.bytes);
      write_string_arg(w, "direction", copy_direction_name(copy.direction));
      write_string_arg(w, "src_kind", memory_kind_name(copy.src_kind));
      write_string_arg(w, "dst_kind", memory_kind_name(copy.dst_kind));
      write_json_arg(w, "stream", section.stream_json_text(copy.stream));
      write_number_arg(w, "device", copy.device);
      if (copy.direction == static_cast<uint8_t>(CopyDirection::kPeer))
        write_number_arg(w, "peer_device", copy.peer_device);
      write_copy_devices(w, copy);
      break;
    }
    case RecordKind::kGraphLaunch: {
      write_graph_args(w, section, op.graph_launch.graph_exec);
      write_json_arg(w, "stream", section.stream_json_text(op.graph_launch.stream));
      write_number_arg(w, "device", op.graph_launch.device);
      break;
    }
    default: {
      const auto& set = op.set;
      write_number_arg(w, "bytes", set.bytes);
      write_number_arg(w, "value", set.value);
      write_number_arg(w, "element_bytes", static_cast<uint32_t>(set.element_bytes));
      write_string_arg(w, "dst_kind", memory_kind_name(set.dst_kind));
      write_json_arg(w, "stream", section.stream_json_text(set.stream));
      write_number_arg(w, "device", set.device);
      break;
    }
  }
  w.raw("}}");
}

void SliceWriter::write_graph_args(JsonWriter& w, SectionContext& section, uint64_t graph_exec) {
  write_string_arg(w, "graph_exec", hex(graph_exec));
  const auto found = section.graphs.find(graph_exec);
  if (found == section.graphs.end()) return;
  const SectionContext::GraphSummary& graph = found->second;
  write_number_arg(w, "nodes", graph.nodes);
  write_number_arg(w, "kernels", graph.kernels);
  std::string names = "[";
  for (size_t i = 0; i < graph.first_kernels.size(); ++i) {
    if (i != 0) names += ",";
    names += section.kernel_json_name(graph.first_kernels[i], graph.defined_ns);
  }
  names += "]";
  write_json_arg(w, graph.kernels > graph.first_kernels.size() ? "first_kernel_names" : "kernel_names", names);
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
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_string_arg(w, "action", graph_exec_action_name(record.action));
  if (record.graph_exec != 0) write_graph_args(w, section, record.graph_exec);
  if (record.graph != 0) write_string_arg(w, "graph", hex(record.graph));
  if (record.stream != 0) write_json_arg(w, "stream", section.stream_json_text(record.stream));
  // Kept after a destroy: the launches' GPU work may be read after it.
  w.raw("}}");
}

void SliceWriter::stream_capture(SectionContext& section, uint32_t tid, const StreamCaptureRecord& record,
                                 CallStackRef stack) {
  JsonWriter& w = begin_api_slice(section, place_api(section, tid, record.span), record.span, 0, stack);
  write_json_arg(w, "stream", section.stream_json_text(record.stream));
  if (record.capture_id != 0) write_number_arg(w, "capture_id", record.capture_id);
  if (record.graph != 0) write_string_arg(w, "graph", hex(record.graph));
  if (record.mode != kCaptureModeUnknown) write_string_arg(w, "mode", capture_mode_name(record.mode));
  w.raw("}}");
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
    JsonWriter& c = out_.next_event();
    c.raw("{\"ph\":\"X\",\"cat\":\"capture\",\"name\":\"Stream capture\",\"pid\":");
    c.number(section.pid);
    c.raw(",\"tid\":");
    c.number(layout_.host_tid(section, tid));
    c.raw(",\"ts\":");
    c.microseconds(begin_ns);
    c.raw(",\"dur\":");
    c.microseconds(difference_ns(end_ns, begin_ns));
    c.raw(",\"args\":{");
    c.raw("\"stream\":");
    c.raw(section.stream_json_text(record.stream));
    if (open->second.mode != kCaptureModeUnknown) write_string_arg(c, "mode", capture_mode_name(open->second.mode));
    if (record.capture_id != 0) write_number_arg(c, "capture_id", record.capture_id);
    write_string_arg(c, "result", record.span.result == 0 ? "graph " + hex(record.graph) : "failed (" + std::to_string(record.span.result) + ")");
    c.raw("}}");
    ++stats_.api_slices;
  }
  section.open_captures.erase(open);
}

void SliceWriter::operation_alone(const HostOperation& op) {
  write_operation(op, place_api(*op.section, op.tid, op.span()), 0);
  nvtx_operation_done(op, nullptr);
}

void SliceWriter::gpu_work_alone(const DeviceActivity& activity) {
  write_gpu_work(nullptr, activity, place_gpu(nullptr, activity), 0);
}

void SliceWriter::joined(const HostOperation& op, const DeviceActivity& activity) {
  nvtx_operation_done(op, &activity);
  const ApiPlacement api = place_api(*op.section, op.tid, op.span());
  const GpuWork gpu = place_gpu(&op, activity);
  uint64_t flow_id = 0;
  if (gpu.placement.start_ns >= api.begin_ns) {
    flow_id = next_flow_id_++;
    ++stats_.flows;
  } else {
    ++stats_.flows_dropped_backwards;
  }
  write_operation(op, api, flow_id);
  write_gpu_work(&op, activity, gpu, flow_id);
}

}  // namespace proflaunch::tools::perfetto_json
