// SliceWriter, GPU side: where GPU work goes and how it is written.
#include <algorithm>
#include <cmath>
#include <string>

#include "tools/proftrace/demangle.h"
#include "tools/proftrace/stats/amd_occupancy.h"
#include "tools/proftrace/timeline/operation_args.h"
#include "tools/proftrace/timeline/slice_writer.h"
#include "tools/proftrace/record_text.h"

namespace proflaunch::tools::timeline {

using namespace proflaunch::format;

namespace {

// Kineto's category of GPU work by its kind; "gpu" where Kineto has none.
std::string_view gpu_activity_category(uint8_t kind) {
  switch (static_cast<GpuActivityKind>(kind)) {
    case GpuActivityKind::kKernel: return "kernel";
    case GpuActivityKind::kMemoryCopy: return "gpu_memcpy";
    case GpuActivityKind::kMemorySet: return "gpu_memset";
    case GpuActivityKind::kHostFunction: return "gpu.host_function";
    case GpuActivityKind::kGraph: return "gpu.graph";
  }
  return "gpu";
}

}  // namespace

void SliceWriter::begin_gpu_slice(Str category, Str name, const GpuPlacement& placement) {
  ++stats_.gpu_slices;
  begin_slice(TrackRef{placement.pid, placement.tid}, placement.start_ns, placement.end_ns, category, name);
}

SliceWriter::GpuWork SliceWriter::place_gpu(const HostOperation* op, const DeviceActivity& device_activity,
                                            int64_t call_begin_ns) {
  const GpuActivityRecord& activity = device_activity.activity;
  SectionContext& section = *device_activity.context;
  GpuWork work{};
  // The launch knows the stream as the program named it and the thread that
  // issued it (needed for per-thread default streams); prefer it.
  work.stream = op != nullptr ? op->stream() : activity.stream;
  work.launching_tid = op != nullptr ? op->tid : device_activity.tid;
  work.device = activity.device;
  work.measured_start_ns = layout_.timeline_ns(section, activity.start_ns);
  work.measured_end_ns = layout_.timeline_ns(section, activity.end_ns);
  if (work.measured_end_ns < work.measured_start_ns) ++stats_.negative_durations;
  // A collective's kernel is timed from the rank's arrival on the stream
  // (preload/cuda/library_frame.h): the wait analysis needs that (stats
  // nccl-ranks reads it from the records), but the kernel cannot have run
  // before its launch call began, nor before the work the library queued
  // ahead of it on the stream ended (the simulated NCCL's host function).
  // Drawn from its launch (issue 40, item 3) and after that work (item 11:
  // else every such kernel went to an "overlapping work" lane), with the
  // time since the arrival as an arg. Drawn 1 ns after the call's begin, not
  // at it: an importer orders equal times by file order and binds a flow's
  // end to a slice that begins after its start, so at the same time the
  // launch's arrow was dropped (Perfetto's, both formats).
  const bool arrival_timed = device_activity.collective != nullptr;
  int64_t start_ns = work.measured_start_ns;
  if (arrival_timed && call_begin_ns != INT64_MIN && start_ns <= call_begin_ns)
    start_ns = std::min(call_begin_ns + 1, work.measured_end_ns);
  work.placement = layout_.place_gpu_work(section, work.device, work.stream, work.launching_tid, start_ns,
                                          work.measured_end_ns, /*graph_replays=*/false, arrival_timed);
  if (arrival_timed) {
    work.since_arrival_ns = difference_ns(work.placement.start_ns, work.measured_start_ns);
    work.placement.adjusted_ns = 0;
  }
  if (work.placement.adjusted_ns != 0) ++stats_.gpu_overlaps_adjusted;
  return work;
}

void SliceWriter::write_gpu_work(const HostOperation* op, const DeviceActivity& device_activity,
                                 const GpuWork& work, uint64_t flow_id) {
  const GpuActivityRecord& activity = device_activity.activity;
  SectionContext& section = *device_activity.context;

  // Kineto's categories where the work is what Kineto names (kernel,
  // gpu_memcpy, gpu_memset); our own for what it has no name for.
  std::string_view category = "gpu";
  Str name;
  if (op != nullptr && op->kind == interpret::OperationKind::kKernel) {
    const bool host_function = (op->launch.launch_flags & kLaunchHostFunction) != 0;
    category = host_function ? "gpu.host_function" : "kernel";
    name = host_function ? section.host_function_name(op->launch.function, op->launch.span.begin_ns)
                         : section.kernel_name(op->launch.function, op->launch.span.begin_ns);
  } else if (op != nullptr && op->kind == interpret::OperationKind::kCopy) {
    category = "gpu_memcpy";
    name = intern("Memcpy " + copy_direction_name(op->copy.direction) + peer_devices_text(op->copy));
  } else if (op != nullptr && op->kind == interpret::OperationKind::kGraphLaunch) {
    category = "gpu.graph";
    const auto found = section.graphs.find(op->graph_launch.graph_exec);
    name = intern("Graph " + hex(op->graph_launch.graph_exec) +
                  (found != section.graphs.end() ? " (" + std::to_string(found->second.kernels) + " kernels)" : ""));
  } else if (op != nullptr) {
    category = "gpu_memset";
    name = intern("Memset");
  } else {
    category = gpu_activity_category(activity.kind);
    name = intern(gpu_activity_kind_name(activity.kind) +
                  (device_activity.before_first_call ? " (launched before the recorded window)" : " (its call is not in the trace)"));
  }

  begin_gpu_slice(intern_static(category), name, work.placement);  // a literal
  slice_.flow_in = flow_id;
  // Kineto's args first (device, stream, correlation), then our own. A
  // host function runs on a host thread, not the GPU: its stream and
  // correlation under other names, or Kineto's consumers count it as GPU
  // compute and find its correlation on two host events (issue 40).
  const bool host_function = op != nullptr && op->kind == interpret::OperationKind::kKernel &&
                             (op->launch.launch_flags & kLaunchHostFunction) != 0;
  add_device(args_, "device", work.device);
  args_.add_uint(host_function ? "host function stream" : "stream", section.stream_id(work.stream, work.launching_tid));
  args_.add_uint(host_function ? "launch correlation" : "correlation", activity.correlation_id);
  args_.add_uint("pid", section.model != nullptr ? section.model->pid() : section.pid);
  args_.add_uint("tid", work.launching_tid);
  if (device_activity.collective != nullptr) {
    args_.add_text("collective", instance_label(*device_activity.collective));
    args_.add_int("since rank arrival (ns)", work.since_arrival_ns);
  }
  if (host_function) {
    args_.add_bool("host_function", true);
  } else if (op != nullptr && op->kind == interpret::OperationKind::kKernel) {
    add_kernel_args(section, op->launch);
  }
  if (op != nullptr && op->kind == interpret::OperationKind::kGraphLaunch) add_graph_args(section, op->graph_launch.graph_exec);
  if (op != nullptr && op->kind != interpret::OperationKind::kKernel && op->kind != interpret::OperationKind::kGraphLaunch) {
    const uint64_t bytes = op->bytes();
    args_.add_uint("bytes", bytes);
    if (work.measured_end_ns > work.measured_start_ns) {
      // Bytes per ns is GB/s (1e9 bytes per second), as Kineto computes it;
      // from the measured duration, before any placement adjustment.
      args_.add_double("memory bandwidth (GB/s)",
                       static_cast<double>(bytes) /
                           static_cast<double>(difference_ns(work.measured_end_ns, work.measured_start_ns)));
    }
    if (op->kind == interpret::OperationKind::kCopy) {
      args_.add_string("direction", intern(copy_direction_name(op->copy.direction)));
      args_.add_string("src_kind", intern(memory_kind_name(op->copy.src_kind)));
      args_.add_string("dst_kind", intern(memory_kind_name(op->copy.dst_kind)));
      add_copy_devices(args_, op->copy);
    }
  }
  if (work.placement.adjusted_ns != 0) args_.add_int("start_adjusted_ns", work.placement.adjusted_ns);
  emit();
}

SliceWriter::StreamKey SliceWriter::stream_key(const HostOperation* op, const DeviceActivity& activity) {
  // As place_gpu() finds the stream and the launching thread.
  const uint64_t stream = op != nullptr ? op->stream() : activity.activity.stream;
  const uint32_t tid = op != nullptr ? op->tid : activity.tid;
  return StreamKey{activity.context, stream, stream == kStreamPerThread ? tid : 0};
}

bool SliceWriter::is_held_host_function(const HostOperation& op, const DeviceActivity& activity) {
  return op.kind == interpret::OperationKind::kKernel && (op.launch.launch_flags & kLaunchHostFunction) != 0 &&
         activity.activity.source == static_cast<uint8_t>(GpuTimingSource::kEvents) &&
         activity.collective == nullptr && activity.activity.graph_node == 0;
}

bool SliceWriter::held_for_stream_order(const HostOperation& op, const DeviceActivity& activity) const {
  if (is_held_host_function(op, activity)) return true;
  return activity.activity.source == static_cast<uint8_t>(GpuTimingSource::kEvents) && !held_.empty() &&
         activity.activity.graph_node == 0 && held_.count(stream_key(&op, activity)) != 0;
}

void SliceWriter::release_passed(const HostOperation* op, const DeviceActivity& activity) {
  if (held_.empty()) return;
  // What only events time under CUPTI too (a host function, a collective's
  // kernel) says nothing of where CUPTI's records are: it releases nothing.
  // CUPTI-timed work does; so does other work timed by events, which means
  // events time the whole stream, in order.
  const bool event_timed = activity.activity.source == static_cast<uint8_t>(GpuTimingSource::kEvents);
  if (event_timed && (activity.collective != nullptr || activity.activity.graph_node != 0 ||
                      (op != nullptr && op->kind == interpret::OperationKind::kKernel &&
                       (op->launch.launch_flags & kLaunchHostFunction) != 0)))
    return;
  const auto found = held_.find(stream_key(op, activity));
  if (found == held_.end()) return;
  std::deque<HeldGpuWork>& queue = found->second;
  // A host function goes once `activity` starts after it ends; what waits
  // in line behind it, with it.
  while (!queue.empty() && (!is_held_host_function(queue.front().operation, queue.front().activity) ||
                            queue.front().activity.activity.end_ns <= activity.activity.start_ns)) {
    const HeldGpuWork held = queue.front();
    queue.pop_front();
    place_held(held);
  }
  if (queue.empty()) held_.erase(found);
}

void SliceWriter::hold(const HostOperation& op, const DeviceActivity& activity, int64_t call_begin_ns,
                       uint64_t flow_id) {
  std::deque<HeldGpuWork>& queue = held_[stream_key(&op, activity)];
  HeldGpuWork& held = queue.emplace_back(HeldGpuWork{op, activity, call_begin_ns, flow_id, false, {}});
  held.activity.operation = nullptr;
  held.activity.node = nullptr;
  held.activity.collective = nullptr;
  if (activity.collective != nullptr) {
    held.collective_known = true;
    held.collective = *activity.collective;
  }
  if (queue.size() > kMaxHeldPerStream) {
    const HeldGpuWork oldest = queue.front();
    queue.pop_front();
    place_held(oldest);
  }
}

void SliceWriter::place_held(const HeldGpuWork& held) {
  DeviceActivity activity = held.activity;
  if (held.collective_known) activity.collective = &held.collective;
  const GpuWork gpu = place_gpu(&held.operation, activity, held.call_begin_ns);
  if (annotations_on_streams_) nvtx_operation_done(held.operation, &activity, &gpu.placement);
  write_gpu_work(&held.operation, activity, gpu, held.flow_id);
}

void SliceWriter::release_held_gpu_work() {
  // Stream by stream, each in the order it was held.
  for (auto& [key, queue] : held_)
    for (const HeldGpuWork& held : queue) place_held(held);
  held_.clear();
}

void SliceWriter::add_kernel_args(const SectionContext& section, const KernelLaunchRecord& launch) {
  const FunctionDefRecord* function =
      section.model != nullptr ? section.model->function_def(launch.function, launch.span.begin_ns) : nullptr;
  const DeviceInfoRecord* device = nullptr;
  if (section.model != nullptr) {
    auto found = section.model->devices.find(launch.device);
    if (found != section.model->devices.end()) device = &found->second;
  }
  // Kineto's kernel args, each only when the trace knows its inputs: the
  // function's resource use (FunctionDef), the device's limits (DeviceInfo).
  if (function != nullptr && (function->attributes_known & kFunctionRegisters) != 0)
    args_.add_uint("registers per thread", function->registers_per_thread);
  if (function != nullptr && (function->attributes_known & kFunctionStaticShared) != 0)
    args_.add_uint("shared memory", uint64_t{function->static_shared_bytes} + launch.dynamic_shared_bytes);
  const uint64_t grid_blocks = uint64_t{launch.grid.x} * launch.grid.y * launch.grid.z;
  const uint64_t block_threads = uint64_t{launch.block.x} * launch.block.y * launch.block.z;
  if (device != nullptr && device->multiprocessor_count != 0) {
    // Kineto's "blocks per SM" is the grid spread over the SMs, not the
    // blocks an SM can hold (that limit is in the occupancy below).
    const double blocks_per_sm = double(grid_blocks) / double(device->multiprocessor_count);
    args_.add_double("blocks per SM", blocks_per_sm);
    if (device->warp_size != 0) args_.add_double("warps per SM", blocks_per_sm * double(block_threads) / device->warp_size);
  }
  args_.add_dim3("grid", launch.grid);
  args_.add_dim3("block", launch.block);
  if (function != nullptr && device != nullptr) {
    if (auto occupancy =
            stats::launch_occupancy(launch, *function, *device, section.model->string(device->name_string)))
      args_.add_int("est. achieved occupancy %", std::lround(occupancy->achieved_estimate * 100.0));
  }
  args_.add_uint("shared_bytes", launch.dynamic_shared_bytes);
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
  // Kernels, copies and memsets under Kineto's categories (it counts them
  // whoever launched them); "unattributed" says that no hooked call did.
  const std::string_view category = gpu_activity_category(record.kind);
  const bool kineto_kind = category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset";
  begin_gpu_slice(intern(kineto_kind ? category : "gpu.unattributed"), intern(name), placement);
  add_device(args_, "device", record.device);
  args_.add_uint("stream", section.stream_id(stream, tid));
  args_.add_bool("unattributed", true);
  args_.add_string("kind", intern(gpu_activity_kind_name(record.kind)));
  args_.add_string("timed_by", intern(gpu_timing_source_name(record.source)));
  if (!stream_known) args_.add_uint("backend_stream", record.stream);
  if (!mangled.empty()) args_.add_string("mangled_name", Str{mangled, 0});
  if (record.bytes != 0) args_.add_uint("bytes", record.bytes);
  if (placement.adjusted_ns != 0) args_.add_int("start_adjusted_ns", placement.adjusted_ns);
  emit();
}

namespace {

uint64_t replay_key(const SectionContext& section, uint64_t correlation_id) {
  const uint64_t section_id = section.model != nullptr ? section.model->section_id : section.pid;
  return (section_id * 0x9E3779B97F4A7C15ull) ^ correlation_id;
}

}  // namespace

void SliceWriter::graph_replay_node(const HostOperation& launch, const DeviceActivity& node, bool first) {
  release_passed(&launch, node);
  SectionContext& section = *launch.context;
  const GpuWork work = place_gpu(&launch, node);
  Replay& replay = replays_[replay_key(section, launch.span().correlation_id)];
  if (first) {
    replay = Replay{};
    replay.device = work.device;
    nvtx_operation_done(launch, &node);
    const ApiPlacement api = place_api(section, launch.tid, launch.span());
    replay.flow_id = flow_if(work.placement.start_ns >= api.begin_ns);
    write_operation(launch, api, replay.flow_id);
  }
  replay.start_ns = std::min(replay.start_ns, work.measured_start_ns);
  replay.end_ns = std::max(replay.end_ns, work.measured_end_ns);

  const GpuActivityRecord& activity = node.activity;
  const GraphNodeRecord* record = node.node;
  const auto kind = static_cast<GpuActivityKind>(activity.kind);
  std::string_view category = gpu_activity_category(activity.kind);
  Str name;
  if (kind == GpuActivityKind::kKernel && record != nullptr && record->function != 0)
    name = section.kernel_name(record->function, launch.span().begin_ns);
  else if (kind == GpuActivityKind::kHostFunction && record != nullptr && record->function != 0)
    name = section.host_function_name(record->function, launch.span().begin_ns);
  else if (kind == GpuActivityKind::kMemoryCopy)
    name = intern_static("Memcpy");
  else if (kind == GpuActivityKind::kMemorySet)
    name = intern_static("Memset");
  else
    name = intern(gpu_activity_kind_name(activity.kind) + " (graph node)");
  begin_gpu_slice(intern_static(category), name, work.placement);
  // Kineto's args first (device, stream, correlation), then our own.
  add_device(args_, "device", work.device);
  args_.add_uint("stream", section.stream_id(work.stream, work.launching_tid));
  args_.add_uint("correlation", activity.correlation_id);
  args_.add_uint("pid", section.model != nullptr ? section.model->pid() : section.pid);
  args_.add_uint("tid", work.launching_tid);
  args_.add_text("graph_exec", hex(launch.graph_launch.graph_exec));
  args_.add_text("graph_node", hex(activity.graph_node));
  if (kind == GpuActivityKind::kKernel && record != nullptr) {
    args_.add_dim3("grid", record->grid);
    args_.add_dim3("block", record->block);
    args_.add_uint("shared_bytes", record->dynamic_shared_bytes);
  } else if (record != nullptr && record->bytes != 0) {
    args_.add_uint("bytes", record->bytes);
  }
  if (work.placement.adjusted_ns != 0) args_.add_int("start_adjusted_ns", work.placement.adjusted_ns);
  emit();
}

void SliceWriter::graph_replay_done(const HostOperation& launch) {
  SectionContext& section = *launch.context;
  const auto found = replays_.find(replay_key(section, launch.span().correlation_id));
  if (found == replays_.end()) return;
  const Replay replay = found->second;
  replays_.erase(found);
  const uint64_t stream = launch.stream();
  const GpuPlacement placement =
      layout_.place_gpu_work(section, replay.device, stream, launch.tid, replay.start_ns, replay.end_ns,
                             /*graph_replays=*/true);
  if (placement.adjusted_ns != 0) ++stats_.gpu_overlaps_adjusted;
  const auto graph = section.graphs.find(launch.graph_launch.graph_exec);
  const Str name = intern("Graph " + hex(launch.graph_launch.graph_exec) +
                          (graph != section.graphs.end() ? " (" + std::to_string(graph->second.kernels) + " kernels)"
                                                         : ""));
  begin_gpu_slice(intern_static("gpu.graph"), name, placement);
  slice_.flow_in = replay.flow_id;
  add_device(args_, "device", replay.device);
  args_.add_uint("stream", section.stream_id(stream, launch.tid));
  args_.add_uint("correlation", launch.span().correlation_id);
  args_.add_uint("pid", section.model != nullptr ? section.model->pid() : section.pid);
  args_.add_uint("tid", launch.tid);
  add_graph_args(section, launch.graph_launch.graph_exec);
  if (placement.adjusted_ns != 0) args_.add_int("start_adjusted_ns", placement.adjusted_ns);
  emit();
}

}  // namespace proflaunch::tools::timeline
