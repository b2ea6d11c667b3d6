// SliceWriter, GPU side: where GPU work goes and how it is written.
#include <string>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/perfetto_json/json_args.h"
#include "tools/proftrace/perfetto_json/slice_writer.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::perfetto_json {

using namespace proflaunch::format;

namespace {

uint64_t operation_stream(const HostOperation& op) {
  switch (op.kind) {
    case RecordKind::kKernelLaunch: return op.launch.stream;
    case RecordKind::kMemoryCopy: return op.copy.stream;
    case RecordKind::kGraphLaunch: return op.graph_launch.stream;
    default: return op.set.stream;
  }
}

uint64_t operation_bytes(const HostOperation& op) {
  switch (op.kind) {
    case RecordKind::kMemoryCopy: return op.copy.bytes;
    case RecordKind::kMemorySet: return op.set.bytes;
    default: return 0;
  }
}

}  // namespace

JsonWriter& SliceWriter::begin_gpu_slice(const char* category, const std::string& json_name,
                                         const GpuPlacement& placement) {
  JsonWriter& w = out_.next_event();
  ++stats_.gpu_slices;
  w.raw("{\"ph\":\"X\",\"cat\":\"");
  w.raw(category);
  w.raw("\",\"name\":");
  w.raw(json_name);
  w.raw(",\"pid\":");
  w.number(placement.pid);
  w.raw(",\"tid\":");
  w.number(placement.tid);
  w.raw(",\"ts\":");
  w.microseconds(placement.start_ns);
  w.raw(",\"dur\":");
  w.microseconds(difference_ns(placement.end_ns, placement.start_ns));
  return w;
}

SliceWriter::GpuWork SliceWriter::place_gpu(const HostOperation* op, const DeviceActivity& device_activity) {
  const GpuActivityRecord& activity = device_activity.activity;
  SectionContext& section = *device_activity.section;
  GpuWork work{};
  // The launch knows the stream as the program named it and the thread that
  // issued it (needed for per-thread default streams); prefer it.
  work.stream = op != nullptr ? operation_stream(*op) : activity.stream;
  work.launching_tid = op != nullptr ? op->tid : device_activity.tid;
  work.device = activity.device;
  work.measured_start_ns = layout_.timeline_ns(section, activity.start_ns);
  work.measured_end_ns = layout_.timeline_ns(section, activity.end_ns);
  if (work.measured_end_ns < work.measured_start_ns) ++stats_.negative_durations;
  work.placement = layout_.place_gpu_work(section, work.device, work.stream, work.launching_tid,
                                          work.measured_start_ns, work.measured_end_ns);
  if (work.placement.adjusted_ns != 0) ++stats_.gpu_overlaps_adjusted;
  return work;
}

void SliceWriter::write_gpu_work(const HostOperation* op, const DeviceActivity& device_activity,
                                 const GpuWork& work, uint64_t flow_id) {
  const GpuActivityRecord& activity = device_activity.activity;
  SectionContext& section = *device_activity.section;

  const char* category = "gpu";
  std::string name;
  const std::string* json_name = nullptr;
  if (op != nullptr && op->kind == RecordKind::kKernelLaunch) {
    category = (op->launch.launch_flags & kLaunchHostFunction) != 0 ? "gpu.host_function" : "gpu.kernel";
    json_name = &section.kernel_json_name(op->launch.function, op->launch.span.begin_ns);
  } else if (op != nullptr && op->kind == RecordKind::kMemoryCopy) {
    category = "gpu.memcpy";
    name = json_quoted("Memcpy " + copy_direction_name(op->copy.direction) + peer_devices_text(op->copy));
  } else if (op != nullptr && op->kind == RecordKind::kGraphLaunch) {
    category = "gpu.graph";
    const auto found = section.graphs.find(op->graph_launch.graph_exec);
    name = json_quoted("Graph " + hex(op->graph_launch.graph_exec) +
                       (found != section.graphs.end() ? " (" + std::to_string(found->second.kernels) + " kernels)" : ""));
  } else if (op != nullptr) {
    category = "gpu.memset";
    name = json_quoted("Memset");
  } else {
    switch (static_cast<GpuActivityKind>(activity.kind)) {
      case GpuActivityKind::kKernel: category = "gpu.kernel"; break;
      case GpuActivityKind::kMemoryCopy: category = "gpu.memcpy"; break;
      case GpuActivityKind::kMemorySet: category = "gpu.memset"; break;
      case GpuActivityKind::kHostFunction: category = "gpu.host_function"; break;
      case GpuActivityKind::kGraph: category = "gpu.graph"; break;
    }
    name = json_quoted(gpu_activity_kind_name(activity.kind) + " (its call is not in the trace)");
  }

  JsonWriter& w = begin_gpu_slice(category, json_name != nullptr ? *json_name : name, work.placement);
  if (flow_id != 0) {
    w.raw(",\"bind_id\":");
    w.number(flow_id);
    w.raw(",\"flow_in\":true");
  }
  w.raw(",\"args\":{\"correlation_id\":");
  w.number(activity.correlation_id);
  write_number_arg(w, "device", work.device);
  write_json_arg(w, "stream", section.stream_json_text(work.stream));
  write_number_arg(w, "pid", section.model != nullptr ? section.model->pid() : section.pid);
  write_number_arg(w, "tid", work.launching_tid);
  if (const std::string* label = collective_label_for(section, activity.correlation_id))
    write_string_arg(w, "collective", *label);
  if (op != nullptr && op->kind == RecordKind::kKernelLaunch && (op->launch.launch_flags & kLaunchHostFunction) != 0) {
    w.raw(",\"host_function\":true");
  } else if (op != nullptr && op->kind == RecordKind::kKernelLaunch) {
    write_dim3_arg(w, "grid", op->launch.grid);
    write_dim3_arg(w, "block", op->launch.block);
    write_number_arg(w, "shared_bytes", op->launch.dynamic_shared_bytes);
  }
  if (op != nullptr && op->kind == RecordKind::kGraphLaunch) write_graph_args(w, section, op->graph_launch.graph_exec);
  if (op != nullptr && op->kind != RecordKind::kKernelLaunch && op->kind != RecordKind::kGraphLaunch) {
    const uint64_t bytes = operation_bytes(*op);
    write_number_arg(w, "bytes", bytes);
    if (work.measured_end_ns > work.measured_start_ns) {
      // Bytes per ns is GB/s (1e9 bytes per second); from the measured
      // duration, before any placement adjustment.
      w.raw(",\"bandwidth_gbps\":");
      w.fixed3(static_cast<double>(bytes) / static_cast<double>(difference_ns(work.measured_end_ns, work.measured_start_ns)));
    }
    if (op->kind == RecordKind::kMemoryCopy) {
      write_string_arg(w, "direction", copy_direction_name(op->copy.direction));
      write_string_arg(w, "src_kind", memory_kind_name(op->copy.src_kind));
      write_string_arg(w, "dst_kind", memory_kind_name(op->copy.dst_kind));
      write_copy_devices(w, op->copy);
    }
  }
  if (work.placement.adjusted_ns != 0) write_number_arg(w, "start_adjusted_ns", work.placement.adjusted_ns);
  w.raw("}}");
}

void SliceWriter::unattributed_gpu_work(SectionContext& section, uint32_t tid, const UnattributedGpuWorkRecord& record) {
  const bool stream_known = (record.flags & kUnattributedStreamKnown) != 0;
  const uint64_t stream = stream_known ? record.stream : kStreamOfBackend | (record.stream & ~kStreamOfBackend);
  const int64_t start = layout_.timeline_ns(section, record.start_ns);
  const int64_t end = layout_.timeline_ns(section, record.end_ns);
  if (end < start) ++stats_.negative_durations;
  const GpuPlacement placement = layout_.place_gpu_work(section, record.device, stream, tid, start, end);
  if (placement.adjusted_ns != 0) ++stats_.gpu_overlaps_adjusted;

  std::string name;
  const char* category = "gpu.unattributed";
  const std::string_view mangled = section.model != nullptr ? section.model->string(record.name_string) : "";
  switch (static_cast<GpuActivityKind>(record.kind)) {
    case GpuActivityKind::kKernel:
      name = "unattributed launch: " + (mangled.empty() ? std::string("unknown kernel") : demangle(mangled));
      break;
    case GpuActivityKind::kMemoryCopy: name = "unattributed memcpy"; break;
    case GpuActivityKind::kMemorySet: name = "unattributed memset"; break;
    default: name = "unattributed " + gpu_activity_kind_name(record.kind); break;
  }

  ++stats_.unattributed_slices;
  JsonWriter& w = begin_gpu_slice(category, json_quoted(name), placement);
  w.raw(",\"args\":{\"unattributed\":true");
  write_string_arg(w, "kind", gpu_activity_kind_name(record.kind));
  write_string_arg(w, "timed_by", gpu_timing_source_name(record.source));
  write_number_arg(w, "device", record.device);
  if (stream_known) write_json_arg(w, "stream", section.stream_json_text(record.stream));
  else write_number_arg(w, "backend_stream", record.stream);
  if (!mangled.empty()) write_string_arg(w, "mangled_name", std::string(mangled));
  if (record.bytes != 0) write_number_arg(w, "bytes", record.bytes);
  if (placement.adjusted_ns != 0) write_number_arg(w, "start_adjusted_ns", placement.adjusted_ns);
  w.raw("}}");
}

}  // namespace proflaunch::tools::perfetto_json
