#include "tools/proftrace/perfetto_json/slice_writer.h"

#include <string>

#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::perfetto_json {

using namespace proflaunch::format;

namespace {

void write_dim3(JsonWriter& w, const char* key, const Dim3& dim) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":\"(");
  w.number(dim.x);
  w.put(',');
  w.number(dim.y);
  w.put(',');
  w.number(dim.z);
  w.raw(")\"");
}

void write_string_arg(JsonWriter& w, const char* key, const std::string& value) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":");
  w.quoted(value);
}

template <typename Number>
void write_number_arg(JsonWriter& w, const char* key, Number value) {
  w.raw(",\"");
  w.raw(key);
  w.raw("\":");
  w.number(value);
}

}  // namespace

void SliceWriter::write_duration(JsonWriter& w, int64_t begin, int64_t end) {
  w.raw(",\"ts\":");
  w.microseconds(begin);
  w.raw(",\"dur\":");
  if (end < begin) {
    ++stats_.negative_durations;
    end = begin;
  }
  w.microseconds(end - begin);
}

JsonWriter& SliceWriter::begin_api_slice(SectionContext& section, uint32_t tid, const ApiSpan& span,
                                         uint64_t flow_id) {
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
  w.number(layout_.host_tid(section, tid));
  write_duration(w, layout_.timeline_ns(section, span.begin_ns), layout_.timeline_ns(section, span.end_ns));
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
  return w;
}

void SliceWriter::api_call(SectionContext& section, uint32_t tid, const ApiCallRecord& record) {
  JsonWriter& w = begin_api_slice(section, tid, record.span, 0);
  w.raw("}}");
}

void SliceWriter::synchronize(SectionContext& section, uint32_t tid, const SynchronizeRecord& record) {
  JsonWriter& w = begin_api_slice(section, tid, record.span, 0);
  write_string_arg(w, "target", sync_target_name(record.target));
  write_number_arg(w, "device", record.device);
  if (record.stream != 0) {
    w.raw(",\"stream\":");
    w.raw(section.stream_json_text(record.stream));
  }
  if (record.event != 0) write_string_arg(w, "event", hex(record.event));
  w.raw("}}");
}

void SliceWriter::lifecycle(SectionContext& section, uint32_t tid, const ObjectLifecycleRecord& record) {
  JsonWriter& w = begin_api_slice(section, tid, record.span, 0);
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

void SliceWriter::operation(const HostOperation& op, uint64_t flow_id) {
  SectionContext& section = *op.section;
  JsonWriter& w = begin_api_slice(section, op.tid, op.span(), flow_id);
  switch (op.kind) {
    case RecordKind::kKernelLaunch: {
      const auto& launch = op.launch;
      w.raw(",\"kernel\":");
      w.raw(section.kernel_json_name(launch.function, launch.span.begin_ns));
      write_dim3(w, "grid", launch.grid);
      write_dim3(w, "block", launch.block);
      write_number_arg(w, "shared_bytes", launch.dynamic_shared_bytes);
      w.raw(",\"stream\":");
      w.raw(section.stream_json_text(launch.stream));
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
      w.raw(",\"stream\":");
      w.raw(section.stream_json_text(copy.stream));
      write_number_arg(w, "device", copy.device);
      if (copy.direction == static_cast<uint8_t>(CopyDirection::kPeer))
        write_number_arg(w, "peer_device", copy.peer_device);
      break;
    }
    default: {
      const auto& set = op.set;
      write_number_arg(w, "bytes", set.bytes);
      write_number_arg(w, "value", set.value);
      write_number_arg(w, "element_bytes", static_cast<uint32_t>(set.element_bytes));
      write_string_arg(w, "dst_kind", memory_kind_name(set.dst_kind));
      w.raw(",\"stream\":");
      w.raw(section.stream_json_text(set.stream));
      write_number_arg(w, "device", set.device);
      break;
    }
  }
  w.raw("}}");
}

void SliceWriter::gpu_work(const HostOperation* op, const DeviceActivity& device_activity,
                           uint64_t flow_id) {
  const GpuActivityRecord& activity = device_activity.activity;
  SectionContext& section = *device_activity.section;
  // The launch knows the stream as the program named it and the thread that
  // issued it (needed for per-thread default streams); prefer it.
  uint64_t stream = activity.stream;
  uint32_t launching_tid = device_activity.tid;
  int32_t device = activity.device;
  if (op != nullptr) {
    launching_tid = op->tid;
    switch (op->kind) {
      case RecordKind::kKernelLaunch: stream = op->launch.stream; break;
      case RecordKind::kMemoryCopy: stream = op->copy.stream; break;
      default: stream = op->set.stream; break;
    }
  }
  const GpuTrack track = layout_.gpu_track(section, device, stream, launching_tid);

  const int64_t measured_start = layout_.timeline_ns(section, activity.start_ns);
  int64_t start = measured_start;
  const int64_t end = layout_.timeline_ns(section, activity.end_ns);
  int64_t& last_end = track.process->last_end_ns[track.tid];
  int64_t adjusted_ns = 0;
  if (start < last_end && end > last_end) {
    // Partial overlap with the previous operation on this stream (timer
    // granularity): slices on one track must nest, so start where it ended.
    adjusted_ns = last_end - start;
    start = last_end;
    ++stats_.gpu_overlaps_adjusted;
  }
  if (end > last_end) last_end = end;

  JsonWriter& w = out_.next_event();
  ++stats_.gpu_slices;
  const char* category = "gpu";
  std::string name_storage;
  const std::string* json_name = nullptr;
  const uint64_t bytes = op == nullptr                          ? 0
                         : op->kind == RecordKind::kMemoryCopy ? op->copy.bytes
                         : op->kind == RecordKind::kMemorySet  ? op->set.bytes
                                                               : 0;
  if (op != nullptr && op->kind == RecordKind::kKernelLaunch) {
    category = "gpu.kernel";
    json_name = &section.kernel_json_name(op->launch.function, op->launch.span.begin_ns);
  } else if (op != nullptr && op->kind == RecordKind::kMemoryCopy) {
    category = "gpu.memcpy";
    name_storage = json_quoted("Memcpy " + copy_direction_name(op->copy.direction));
  } else if (op != nullptr) {
    category = "gpu.memset";
    name_storage = json_quoted("Memset");
  } else {
    switch (static_cast<GpuActivityKind>(activity.kind)) {
      case GpuActivityKind::kKernel: category = "gpu.kernel"; break;
      case GpuActivityKind::kMemoryCopy: category = "gpu.memcpy"; break;
      case GpuActivityKind::kMemorySet: category = "gpu.memset"; break;
    }
    name_storage = json_quoted(gpu_activity_kind_name(activity.kind) + " (its call is not in the trace)");
  }
  w.raw("{\"ph\":\"X\",\"cat\":\"");
  w.raw(category);
  w.raw("\",\"name\":");
  w.raw(json_name != nullptr ? *json_name : name_storage);
  w.raw(",\"pid\":");
  w.number(track.pid);
  w.raw(",\"tid\":");
  w.number(track.tid);
  write_duration(w, start, end);
  if (flow_id != 0) {
    w.raw(",\"bind_id\":");
    w.number(flow_id);
    w.raw(",\"flow_in\":true");
    ++stats_.flows;
  }
  w.raw(",\"args\":{\"correlation_id\":");
  w.number(activity.correlation_id);
  write_number_arg(w, "device", device);
  w.raw(",\"stream\":");
  w.raw(section.stream_json_text(stream));
  write_number_arg(w, "pid", section.model != nullptr ? section.model->pid() : section.pid);
  write_number_arg(w, "tid", launching_tid);
  if (op != nullptr && op->kind == RecordKind::kKernelLaunch) {
    write_dim3(w, "grid", op->launch.grid);
    write_dim3(w, "block", op->launch.block);
    write_number_arg(w, "shared_bytes", op->launch.dynamic_shared_bytes);
  }
  if (op != nullptr && op->kind != RecordKind::kKernelLaunch) {
    write_number_arg(w, "bytes", bytes);
    if (end > measured_start) {
      // bytes per ns is GB/s (1e9 bytes per second); from the measured
      // duration, before any overlap adjustment.
      w.raw(",\"bandwidth_gbps\":");
      w.fixed3(static_cast<double>(bytes) / static_cast<double>(end - measured_start));
    }
    if (op->kind == RecordKind::kMemoryCopy) {
      write_string_arg(w, "direction", copy_direction_name(op->copy.direction));
      write_string_arg(w, "src_kind", memory_kind_name(op->copy.src_kind));
      write_string_arg(w, "dst_kind", memory_kind_name(op->copy.dst_kind));
    }
  }
  if (adjusted_ns != 0) write_number_arg(w, "start_adjusted_ns", adjusted_ns);
  w.raw("}}");
}

}  // namespace proflaunch::tools::perfetto_json
