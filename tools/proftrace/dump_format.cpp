#include "tools/proftrace/dump_format.h"

#include <charconv>
#include <cstdio>
#include <cstring>

#include "formats/record_kinds.h"
#include "tools/proftrace/collective_text.h"
#include "tools/proftrace/demangle.h"
#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/stacks/stack_dump.h"

namespace proflaunch::tools {

using namespace proflaunch::format;

namespace {

class LineBuilder {
 public:
  explicit LineBuilder(std::string& line) : line_(line) {}

  template <typename Number>
  LineBuilder& num(const char* name, Number value) {
    field(name);
    char text[32];
    line_.append(text, static_cast<size_t>(std::to_chars(text, text + sizeof text, value).ptr - text));
    return *this;
  }
  LineBuilder& hexnum(const char* name, uint64_t value) {
    field(name);
    line_ += hex(value);
    return *this;
  }
  LineBuilder& text(const char* name, const std::string& value) {
    field(name);
    line_ += value;
    return *this;
  }
  // Quoted and escaped, so names with spaces or odd bytes stay on one line.
  LineBuilder& quoted(const char* name, std::string_view value) {
    field(name);
    line_ += json_quoted(value);
    return *this;
  }
  LineBuilder& dim3(const char* name, const Dim3& d) {
    field(name);
    line_ += "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
    return *this;
  }

 private:
  void field(const char* name) {
    line_ += ' ';
    line_ += name;
    line_ += '=';
  }
  std::string& line_;
};

void span_fields(LineBuilder& b, const ApiSpan& span, const SectionModel* section) {
  b.num("begin_ns", span.begin_ns).num("end_ns", span.end_ns);
  b.num("dur_ns", static_cast<int64_t>(span.end_ns - span.begin_ns));
  b.text("api", section != nullptr ? section->api_name(span.api) : "api#" + std::to_string(span.api));
  b.num("correlation_id", span.correlation_id).num("result", span.result).hexnum("flags", span.flags);
}

std::string string_of(const SectionModel* section, uint32_t id) {
  if (section == nullptr || id == 0) return "";
  return std::string(section->string(id));
}

}  // namespace

void format_record(std::string& line, const RecordView& record, const SectionModel* section) {
  const auto name = record_kind_name(record.kind);
  line += name ? std::string(*name) : "kind" + std::to_string(record.kind);
  LineBuilder b(line);
  b.hexnum("section", record.section_id);
  if (section != nullptr && section->process) b.num("pid", section->pid());
  if (record.tid != 0) b.num("tid", record.tid);

  switch (record.record_kind()) {
    case RecordKind::kProcessInfo: {
      const auto r = record.as<ProcessInfoRecord>();
      b.num("pid", r.pid).num("ppid", r.ppid).num("rank", r.rank).num("local_rank", r.local_rank);
      b.num("world_size", r.world_size).hexnum("flags", r.flags).num("monotonic_ns", r.monotonic_ns);
      b.num("realtime_ns", r.realtime_ns).num("boottime_ns", r.boottime_ns);
      b.hexnum("parent_section", r.parent_section_id);
      b.quoted("host", string_of(section, r.host_string));
      b.quoted("command_line", string_of(section, r.command_line_string));
      b.quoted("executable", string_of(section, r.executable_string));
      b.quoted("tool_version", string_of(section, r.tool_version_string));
      break;
    }
    case RecordKind::kStringDef:
      b.num("id", record.as<StringDefRecord>().id).quoted("text", record.tail<StringDefRecord>());
      break;
    case RecordKind::kApiDef: {
      const auto r = record.as<ApiDefRecord>();
      b.num("api", r.api).text("domain", api_domain_name(r.domain)).text("vendor", vendor_name(r.vendor));
      b.quoted("name", string_of(section, r.name_string));
      break;
    }
    case RecordKind::kFunctionDef: {
      const auto r = record.as<FunctionDefRecord>();
      const std::string mangled = string_of(section, r.name_string);
      b.hexnum("handle", r.handle).num("since_ns", r.since_ns).quoted("name", mangled);
      if (demangle(mangled) != mangled) b.quoted("demangled", demangle(mangled));
      // The resource fields the driver reported (only those it did).
      if (r.attributes_known & kFunctionRegisters) b.num("registers", r.registers_per_thread);
      if (r.attributes_known & kFunctionStaticShared) b.num("static_shared_bytes", r.static_shared_bytes);
      if (r.attributes_known & kFunctionMaxThreadsPerBlock) b.num("max_threads_per_block", r.max_threads_per_block);
      if (r.attributes_known & kFunctionLocalBytes) b.num("local_bytes", r.local_bytes_per_thread);
      break;
    }
    case RecordKind::kThreadInfo: {
      const auto r = record.as<ThreadInfoRecord>();
      b.num("thread", r.tid).num("since_ns", r.since_ns).quoted("name", string_of(section, r.name_string));
      break;
    }
    case RecordKind::kDeviceInfo: {
      const auto r = record.as<DeviceInfoRecord>();
      std::string uuid;
      for (uint8_t byte : r.uuid) {
        const char digits[] = "0123456789abcdef";
        uuid += digits[byte >> 4];
        uuid += digits[byte & 15];
      }
      b.num("device", r.device).text("vendor", vendor_name(r.vendor));
      b.quoted("name", string_of(section, r.name_string)).num("sms", r.multiprocessor_count);
      b.num("memory_bytes", r.total_memory_bytes).text("uuid", uuid);
      // The occupancy limits, where known (0: the query failed, or an older file).
      if (r.compute_capability_major != 0)
        b.text("compute_capability",
               std::to_string(r.compute_capability_major) + "." + std::to_string(r.compute_capability_minor));
      const std::pair<const char*, uint32_t> limits[] = {
          {"warp_size", r.warp_size},
          {"max_threads_per_sm", r.max_threads_per_multiprocessor},
          {"max_blocks_per_sm", r.max_blocks_per_multiprocessor},
          {"registers_per_sm", r.registers_per_multiprocessor},
          {"registers_per_block", r.registers_per_block},
          {"shared_bytes_per_sm", r.shared_bytes_per_multiprocessor},
          {"shared_bytes_per_block", r.shared_bytes_per_block},
          {"shared_bytes_per_block_optin", r.shared_bytes_per_block_optin},
          {"reserved_shared_bytes_per_block", r.reserved_shared_bytes_per_block},
      };
      for (const auto& [name, value] : limits)
        if (value != 0) b.num(name, value);
      break;
    }
    case RecordKind::kGpuMetricDef: {
      const auto r = record.as<GpuMetricDefRecord>();
      b.num("metric", r.metric).num("device", r.device).num("kind", r.kind).num("source", r.source);
      if (r.link != 0xFFFF) b.num("link", r.link);
      b.quoted("name", string_of(section, r.name_string)).quoted("unit", string_of(section, r.unit_string));
      if (r.unsupported_reason_string != 0) b.quoted("unsupported", string_of(section, r.unsupported_reason_string));
      break;
    }
    case RecordKind::kGpuMetricSample: {
      const auto r = record.as<GpuMetricSampleRecord>();
      b.num("metric", r.metric).num("time_ns", r.time_ns).num("value", r.value);
      break;
    }
    case RecordKind::kSectionEnd: {
      const auto r = record.as<SectionEndRecord>();
      b.num("end_ns", r.end_ns).num("records_written", r.records_written).num("records_dropped", r.records_dropped);
      break;
    }
    case RecordKind::kThreadBatch: break;  // its tid is printed above
    case RecordKind::kLost: {
      const auto r = record.as<LostRecord>();
      b.text("reason", "\"" + lost_reason_name(r.reason) + "\"").num("first_ns", r.first_ns);
      b.num("last_ns", r.last_ns).num("count", r.count);
      break;
    }
    case RecordKind::kCpuSample: {
      const auto r = record.as<CpuSampleRecord>();
      b.num("time_ns", r.time_ns).num("thread_cpu_ns", r.thread_cpu_ns).num("periods", r.periods);
      b.num("native_stack", r.native_stack).num("python_stack", r.python_stack);
      if (r.flags != 0) b.hexnum("flags", r.flags);
      break;
    }
    case RecordKind::kCpuSamplingInfo: {
      const auto r = record.as<CpuSamplingInfoRecord>();
      b.num("hz", r.hz).text("mechanism", "\"" + cpu_sampling_mechanism_name(r.mechanism) + "\"");
      b.text("state", "\"" + cpu_sampling_state_name(r.state) + "\"").num("signal", r.signal_number);
      b.num("time_ns", r.time_ns);
      break;
    }
    case RecordKind::kApiCall: span_fields(b, record.as<ApiCallRecord>().span, section); break;
    case RecordKind::kApiCount: {
      const auto r = record.as<ApiCountRecord>();
      b.text("api", section != nullptr ? section->api_name(r.api) : "api#" + std::to_string(r.api));
      b.num("count", r.count).num("first_ns", r.first_ns).num("last_ns", r.last_ns);
      break;
    }
    case RecordKind::kKernelLaunch: {
      const auto r = record.as<KernelLaunchRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).hexnum("function", r.function);
      if (section != nullptr) {
        const std::string_view mangled = section->function_name(r.function, r.span.begin_ns);
        if (!mangled.empty()) b.quoted("kernel", demangle(mangled));
      }
      b.text("stream", stream_handle_text(r.stream)).hexnum("context", r.context);
      b.dim3("grid", r.grid).dim3("block", r.block).num("shared_bytes", r.dynamic_shared_bytes);
      b.hexnum("launch_flags", r.launch_flags);
      break;
    }
    case RecordKind::kMemoryCopy: {
      const auto r = record.as<MemoryCopyRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).num("bytes", r.bytes).text("direction", copy_direction_name(r.direction));
      b.text("src_kind", memory_kind_name(r.src_kind)).text("dst_kind", memory_kind_name(r.dst_kind));
      b.hexnum("src", r.src).hexnum("dst", r.dst).text("stream", stream_handle_text(r.stream));
      b.hexnum("context", r.context).num("peer_device", r.peer_device);
      b.num("src_device", r.src_device).num("dst_device", r.dst_device);
      break;
    }
    case RecordKind::kMemorySet: {
      const auto r = record.as<MemorySetRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).num("bytes", r.bytes).hexnum("dst", r.dst).num("value", r.value);
      b.num("element_bytes", static_cast<unsigned>(r.element_bytes)).text("dst_kind", memory_kind_name(r.dst_kind));
      b.text("stream", stream_handle_text(r.stream)).hexnum("context", r.context);
      break;
    }
    case RecordKind::kSynchronize: {
      const auto r = record.as<SynchronizeRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("target", "\"" + sync_target_name(r.target) + "\"");
      b.text("stream", stream_handle_text(r.stream)).hexnum("event", r.event).hexnum("context", r.context);
      break;
    }
    case RecordKind::kObjectLifecycle: {
      const auto r = record.as<ObjectLifecycleRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("object", object_kind_name(r.object));
      b.text("action", lifecycle_action_name(r.action)).hexnum("handle", r.handle);
      b.hexnum("context", r.context).num("id", r.id).hexnum("creation_flags", r.flags).num("priority", r.priority);
      break;
    }
    case RecordKind::kGpuActivity: {
      const auto r = record.as<GpuActivityRecord>();
      b.num("device", r.device).num("correlation_id", r.correlation_id).num("start_ns", r.start_ns);
      b.num("end_ns", r.end_ns).num("dur_ns", static_cast<int64_t>(r.end_ns - r.start_ns));
      b.text("stream", stream_handle_text(r.stream)).text("kind", gpu_activity_kind_name(r.kind));
      b.num("source", static_cast<unsigned>(r.source));
      if (r.graph_node != 0) b.hexnum("graph_node", r.graph_node);
      break;
    }
    case RecordKind::kGpuTimingInfo: {
      const auto r = record.as<GpuTimingInfoRecord>();
      b.text("source", gpu_timing_source_name(r.source)).num("requested", static_cast<unsigned>(r.requested));
      b.quoted("reason", string_of(section, r.reason_string)).num("at_ns", r.at_ns);
      break;
    }
    case RecordKind::kCaptureWindow: {
      const auto r = record.as<CaptureWindowRecord>();
      b.num("index", r.index).num("at_ns", r.at_ns);
      b.text("action", r.action == static_cast<uint8_t>(CaptureWindowAction::kBegin) ? "begin" : "end");
      b.quoted("trigger", capture_trigger_name(r.trigger));
      if (r.name_string != 0) b.quoted("name", string_of(section, r.name_string));
      if (r.trigger == static_cast<uint8_t>(CaptureTrigger::kStep)) b.num("step", r.step);
      break;
    }
    case RecordKind::kUnattributedGpuWork: {
      const auto r = record.as<UnattributedGpuWorkRecord>();
      b.num("device", r.device).text("kind", gpu_activity_kind_name(r.kind));
      b.text("source", gpu_timing_source_name(r.source));
      if (r.flags & kUnattributedStreamKnown) b.text("stream", stream_handle_text(r.stream));
      else b.num("backend_stream", r.stream);
      if (r.name_string != 0) b.quoted("name", string_of(section, r.name_string));
      b.num("start_ns", r.start_ns).num("end_ns", r.end_ns).num("dur_ns", static_cast<int64_t>(r.end_ns - r.start_ns));
      if (r.bytes != 0) b.num("bytes", r.bytes);
      break;
    }
    case RecordKind::kStreamCapture: {
      const auto r = record.as<StreamCaptureRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("stream", stream_handle_text(r.stream)).hexnum("context", r.context);
      b.text("action", r.action == static_cast<uint8_t>(CaptureAction::kBegin) ? "begin" : "end");
      if (r.mode == kCaptureModeUnknown) b.text("mode", "unknown");
      else b.num("mode", static_cast<unsigned>(r.mode));
      b.num("capture_id", r.capture_id).hexnum("graph", r.graph);
      break;
    }
    case RecordKind::kCapturedNode: {
      const auto r = record.as<CapturedNodeRecord>();
      b.num("correlation_id", r.correlation_id).num("capture_id", r.capture_id);
      b.hexnum("graph", r.graph).hexnum("node", r.node);
      break;
    }
    case RecordKind::kGraphNode: {
      const auto r = record.as<GraphNodeRecord>();
      b.hexnum("graph_exec", r.graph_exec).hexnum("graph", r.graph).hexnum("node", r.node);
      b.text("type", "\"" + graph_node_type_name(r.type) + "\"").hexnum("function", r.function);
      if (r.type == static_cast<uint8_t>(GraphNodeType::kKernel)) {
        b.text("grid", std::to_string(r.grid.x) + "x" + std::to_string(r.grid.y) + "x" + std::to_string(r.grid.z));
        b.text("block", std::to_string(r.block.x) + "x" + std::to_string(r.block.y) + "x" + std::to_string(r.block.z));
        b.num("dynamic_shared_bytes", r.dynamic_shared_bytes);
      }
      b.num("device", r.device).num("bytes", r.bytes).hexnum("address", r.address);
      const std::string_view tail = record.tail<GraphNodeRecord>();
      std::string deps;
      for (size_t i = 0; i + 8 <= tail.size() && i / 8 < r.dependency_count; i += 8) {
        uint64_t node = 0;
        std::memcpy(&node, tail.data() + i, 8);
        char text[24];
        std::snprintf(text, sizeof text, "%s0x%llx", deps.empty() ? "" : ",", static_cast<unsigned long long>(node));
        deps += text;
      }
      b.text("dependencies", "[" + deps + "]");
      if (r.flags & kGraphNodeDependenciesTruncated) b.text("dependencies_truncated", "true");
      break;
    }
    case RecordKind::kGraphExec: {
      const auto r = record.as<GraphExecRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("action", "\"" + graph_exec_action_name(r.action) + "\"");
      b.hexnum("graph_exec", r.graph_exec).hexnum("graph", r.graph);
      if (r.stream != 0) b.text("stream", stream_handle_text(r.stream));
      b.hexnum("context", r.context).num("node_count", r.node_count);
      break;
    }
    case RecordKind::kGraphLaunch: {
      const auto r = record.as<GraphLaunchRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).hexnum("graph_exec", r.graph_exec).text("stream", stream_handle_text(r.stream));
      b.hexnum("context", r.context);
      break;
    }
    case RecordKind::kCallStack:
    case RecordKind::kNativeStackDef:
    case RecordKind::kPythonStackDef:
    case RecordKind::kModuleDef:
    case RecordKind::kSymbolDef:
      append_stack_record_fields(line, record, section);
      break;
    case RecordKind::kCollectiveComm: {
      const auto r = record.as<CollectiveCommRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("action", comm_action_name(r.action)).hexnum("comm", r.comm);
      b.hexnum("comm_id", r.comm_id).hexnum("parent_comm_id", r.parent_comm_id).num("rank", r.rank);
      b.num("nranks", r.nranks).text("library", collective_library_name(r.library));
      break;
    }
    case RecordKind::kCollective: {
      const auto r = record.as<CollectiveRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("op", collective_op_name(r.op)).hexnum("comm", r.comm);
      b.hexnum("comm_id", r.comm_id).num("sequence", r.sequence).num("count", r.count).num("bytes", r.bytes);
      b.text("datatype", nccl_datatype_name(r.datatype));
      if (r.reduction != 255) b.text("reduction", nccl_reduction_name(r.reduction));
      b.num("root", r.root).num("rank", r.rank).num("nranks", r.nranks).text("stream", stream_handle_text(r.stream));
      b.num("group_id", r.group_id).num("group_depth", static_cast<unsigned>(r.group_depth));
      break;
    }
    case RecordKind::kCollectiveGroup: {
      const auto r = record.as<CollectiveGroupRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).num("group_id", r.group_id).text("stream", stream_handle_text(r.stream));
      b.num("members", r.members);
      break;
    }
    case RecordKind::kMemoryOperation: {
      const auto r = record.as<MemoryOperationRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).text("kind", "\"" + allocation_kind_name(r.kind) + "\"");
      b.text("action", "\"" + memory_action_name(r.action) + "\"").hexnum("address", r.address).num("bytes", r.bytes);
      b.text("stream", r.stream != 0 ? stream_handle_text(r.stream) : "0").hexnum("handle", r.handle);
      b.hexnum("context", r.context);
      if (r.pool_reserved_bytes == kPoolReservedUnknown) b.text("pool_reserved_bytes", "unknown");
      else b.num("pool_reserved_bytes", r.pool_reserved_bytes);
      b.num("pitch_or_offset_bytes", r.pitch_or_offset_bytes).hexnum("call_flags", r.flags);
      break;
    }
    case RecordKind::kNvtxDomainDef: {
      const auto r = record.as<NvtxDomainDefRecord>();
      b.hexnum("domain", r.domain).quoted("name", string_of(section, r.name_string));
      break;
    }
    case RecordKind::kNvtxNameDef: {
      const auto r = record.as<NvtxNameDefRecord>();
      b.text("kind", nvtx_name_kind_name(r.kind)).hexnum("domain", r.domain).hexnum("handle", r.handle);
      b.quoted("name", string_of(section, r.name_string));
      break;
    }
    case RecordKind::kNvtxEvent: {
      const auto r = record.as<NvtxEventRecord>();
      span_fields(b, r.span, section);
      b.text("type", nvtx_event_type_name(r.type)).hexnum("domain", r.domain);
      if (r.type == static_cast<uint8_t>(NvtxEventType::kStart) || r.type == static_cast<uint8_t>(NvtxEventType::kEnd))
        b.num("range_id", r.range_id);
      if (r.type >= static_cast<uint8_t>(NvtxEventType::kSyncAcquireStart)) b.hexnum("sync", r.range_id);
      if (r.category != 0) b.num("category", r.category);
      if (r.flags & kNvtxColor) b.hexnum("color", r.color);
      if (r.payload_type != 0) b.text("payload", nvtx_payload_text(r.payload_type, r.payload));
      if (r.message_type == static_cast<uint8_t>(NvtxMessageType::kInline)) {
        const std::string_view message = nvtx_inline_message(record.data, record.bytes);
        b.num("message_bytes", message.size()).quoted("message", message);
      } else if (r.message_type == static_cast<uint8_t>(NvtxMessageType::kRegistered)) {
        b.hexnum("registered", r.message_handle);
      }
      if (r.flags & kNvtxTruncated) b.text("truncated", "yes");
      if (r.flags & kNvtxUnmatched) b.text("unmatched", "yes");
      break;
    }
    case RecordKind::kBlockingCall: {
      const auto r = record.as<BlockingCallRecord>();
      span_fields(b, r.span, section);
      b.text("object_kind", wait_object_kind_name(r.object_kind));
      // Descriptors and pids in decimal, addresses (mutex, futex word) in hex.
      switch (static_cast<WaitObjectKind>(r.object_kind)) {
        case WaitObjectKind::kMutex:
        case WaitObjectKind::kCondition:
        case WaitObjectKind::kSemaphore:
        case WaitObjectKind::kThread:
        case WaitObjectKind::kFutex: b.hexnum("object", r.object); break;
        default: b.num("object", r.object); break;
      }
      b.num("error", r.error);
      break;
    }
    case RecordKind::kMemoryInfo: {
      const auto r = record.as<MemoryInfoRecord>();
      span_fields(b, r.span, section);
      b.num("device", r.device).num("free_bytes", r.free_bytes).num("total_bytes", r.total_bytes);
      break;
    }
  }
  if (const auto fixed = fixed_record_bytes(record.kind); fixed && record.bytes > *fixed &&
                                                          record.record_kind() != RecordKind::kStringDef &&
                                                          record.record_kind() != RecordKind::kNvtxEvent &&
                                                          !has_stack_tail(record.kind))
    b.num("extra_bytes", record.bytes - *fixed);
}

}  // namespace proflaunch::tools
