#include "tools/proftrace/record_text.h"

#include <cstring>

#include <cinttypes>
#include <cstdio>

#include "formats/records.h"

namespace proflaunch::tools {
namespace {

using namespace proflaunch::format;

std::string unknown(uint64_t value) { return "unknown(" + std::to_string(value) + ")"; }

}  // namespace

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

std::string copy_direction_name(uint8_t direction) {
  switch (static_cast<CopyDirection>(direction)) {
    case CopyDirection::kUnknown: return "unknown";
    case CopyDirection::kHostToDevice: return "HtoD";
    case CopyDirection::kDeviceToHost: return "DtoH";
    case CopyDirection::kDeviceToDevice: return "DtoD";
    case CopyDirection::kHostToHost: return "HtoH";
    case CopyDirection::kPeer: return "PtoP";
  }
  return unknown(direction);
}

std::string memory_kind_name(uint8_t kind) {
  switch (static_cast<MemoryKind>(kind)) {
    case MemoryKind::kUnknown: return "unknown";
    case MemoryKind::kPageableHost: return "pageable";
    case MemoryKind::kPinnedHost: return "pinned";
    case MemoryKind::kDevice: return "device";
    case MemoryKind::kManaged: return "managed";
    case MemoryKind::kArray: return "array";
  }
  return unknown(kind);
}

std::string sync_target_name(uint8_t target) {
  switch (static_cast<SyncTarget>(target)) {
    case SyncTarget::kDevice: return "device";
    case SyncTarget::kStream: return "stream";
    case SyncTarget::kEvent: return "event";
    case SyncTarget::kStreamWaitEvent: return "stream waits for event";
    case SyncTarget::kImplicit: return "implicit";
  }
  return unknown(target);
}

std::string object_kind_name(uint8_t kind) {
  switch (static_cast<ObjectKind>(kind)) {
    case ObjectKind::kStream: return "stream";
    case ObjectKind::kEvent: return "event";
    case ObjectKind::kContext: return "context";
    case ObjectKind::kModule: return "module";
    case ObjectKind::kLibrary: return "library";
  }
  return unknown(kind);
}

std::string lifecycle_action_name(uint8_t action) {
  switch (static_cast<LifecycleAction>(action)) {
    case LifecycleAction::kCreate: return "create";
    case LifecycleAction::kDestroy: return "destroy";
  }
  return unknown(action);
}

std::string lost_reason_name(uint32_t reason) {
  switch (static_cast<LostReason>(reason)) {
    case LostReason::kBufferFull: return "buffer full";
    case LostReason::kWriteFailed: return "write failed";
    case LostReason::kThreadGone: return "thread gone";
    case LostReason::kGpuTimingUnresolved: return "GPU timing unresolved";
    case LostReason::kGpuTimingDropped: return "GPU timing records dropped by the backend";
    case LostReason::kOutsideCaptureWindow: return "GPU work of calls outside the capture windows";
    case LostReason::kCpuSampleUnsafe: return "CPU samples not taken (stack not readable safely)";
    case LostReason::kCpuSampleBufferFull: return "CPU samples beyond the sample buffer";
    case LostReason::kGpuMetricSamplesDropped: return "GPU counter samples not taken (PM sampling buffer full)";
  }
  return unknown(reason);
}

std::string cpu_sampling_state_name(uint8_t state) {
  switch (static_cast<CpuSamplingState>(state)) {
    case CpuSamplingState::kOff: return "off";
    case CpuSamplingState::kOn: return "on";
    case CpuSamplingState::kSteppedBack: return "stepped back";
    case CpuSamplingState::kUnavailable: return "unavailable";
  }
  return unknown(state);
}

std::string cpu_sampling_mechanism_name(uint8_t mechanism) {
  switch (static_cast<CpuSamplingMechanism>(mechanism)) {
    case CpuSamplingMechanism::kNone: return "none";
    case CpuSamplingMechanism::kThreadCpuTimer: return "thread CPU-time timer";
    case CpuSamplingMechanism::kPerfEvent: return "perf_event";
  }
  return unknown(mechanism);
}

std::string capture_trigger_name(uint8_t trigger) {
  switch (static_cast<CaptureTrigger>(trigger)) {
    case CaptureTrigger::kStart: return "start";
    case CaptureTrigger::kDelay: return "delay";
    case CaptureTrigger::kDuration: return "duration";
    case CaptureTrigger::kProfilerApi: return "profiler API";
    case CaptureTrigger::kNvtxRange: return "NVTX range";
    case CaptureTrigger::kStep: return "step";
    case CaptureTrigger::kExit: return "exit";
    case CaptureTrigger::kFork: return "fork";
    case CaptureTrigger::kExec: return "exec";
    case CaptureTrigger::kRequest: return "request";
    case CaptureTrigger::kCrash: return "crash";
    case CaptureTrigger::kOutOfMemory: return "out of memory";
    case CaptureTrigger::kStickyError: return "sticky device error";
  }
  return unknown(trigger);
}

std::string api_domain_name(uint8_t domain) {
  switch (static_cast<ApiDomain>(domain)) {
    case ApiDomain::kOther: return "other";
    case ApiDomain::kDriver: return "driver";
    case ApiDomain::kRuntime: return "runtime";
    case ApiDomain::kCollective: return "collective";
    case ApiDomain::kAnnotation: return "annotation";
    case ApiDomain::kOsRuntime: return "os_runtime";
  }
  return unknown(domain);
}

std::string gpu_activity_kind_name(uint8_t kind) {
  switch (static_cast<GpuActivityKind>(kind)) {
    case GpuActivityKind::kKernel: return "kernel";
    case GpuActivityKind::kMemoryCopy: return "memcpy";
    case GpuActivityKind::kMemorySet: return "memset";
    case GpuActivityKind::kHostFunction: return "host function";
    case GpuActivityKind::kGraph: return "graph";
  }
  return unknown(kind);
}

std::string nvtx_event_type_name(uint8_t type) {
  switch (static_cast<NvtxEventType>(type)) {
    case NvtxEventType::kMark: return "mark";
    case NvtxEventType::kPush: return "push";
    case NvtxEventType::kPop: return "pop";
    case NvtxEventType::kStart: return "start";
    case NvtxEventType::kEnd: return "end";
    case NvtxEventType::kSyncAcquireStart: return "sync-acquire-start";
    case NvtxEventType::kSyncAcquireFailed: return "sync-acquire-failed";
    case NvtxEventType::kSyncAcquireSuccess: return "sync-acquire-success";
    case NvtxEventType::kSyncReleasing: return "sync-releasing";
  }
  return "type#" + std::to_string(type);
}

std::string nvtx_name_kind_name(uint8_t kind) {
  switch (static_cast<NvtxNameKind>(kind)) {
    case NvtxNameKind::kRegisteredString: return "registered-string";
    case NvtxNameKind::kCategory: return "category";
    case NvtxNameKind::kOsThread: return "os-thread";
    case NvtxNameKind::kCudaDevice: return "cuda-device";
    case NvtxNameKind::kCudaContext: return "cuda-context";
    case NvtxNameKind::kCudaStream: return "cuda-stream";
    case NvtxNameKind::kCudaEvent: return "cuda-event";
    case NvtxNameKind::kSyncUser: return "sync-user";
  }
  return "kind#" + std::to_string(kind);
}

std::string nvtx_payload_text(uint8_t payload_type, uint64_t bits) {
  switch (static_cast<NvtxPayloadType>(payload_type)) {
    case NvtxPayloadType::kNone: return "";
    case NvtxPayloadType::kUint64: return std::to_string(bits);
    case NvtxPayloadType::kInt64: return std::to_string(static_cast<int64_t>(bits));
    case NvtxPayloadType::kUint32: return std::to_string(static_cast<uint32_t>(bits));
    case NvtxPayloadType::kInt32: return std::to_string(static_cast<int32_t>(static_cast<uint32_t>(bits)));
    case NvtxPayloadType::kDouble: {
      double value;
      std::memcpy(&value, &bits, sizeof value);
      return std::to_string(value);
    }
    case NvtxPayloadType::kFloat: {
      float value;
      const uint32_t low = static_cast<uint32_t>(bits);
      std::memcpy(&value, &low, sizeof value);
      return std::to_string(value);
    }
  }
  return "";
}

std::string_view nvtx_inline_message(const uint8_t* record, uint16_t bytes) {
  if (bytes <= sizeof(NvtxEventRecord)) return {};
  return {reinterpret_cast<const char*>(record) + sizeof(NvtxEventRecord), bytes - sizeof(NvtxEventRecord)};
}

std::string device_label(int32_t device) {
  if (format::is_amd_device(device)) return "AMD GPU " + std::to_string(format::device_ordinal(device));
  return "GPU " + std::to_string(device);
}

std::string gpu_timing_source_name(uint8_t source) {
  switch (static_cast<GpuTimingSource>(source)) {
    case GpuTimingSource::kEvents: return "events";
    case GpuTimingSource::kCupti: return "cupti";
    case GpuTimingSource::kRocprofiler: return "rocprofiler";
  }
  return source == 0 ? "none" : unknown(source);
}

std::string graph_node_type_name(uint8_t type) {
  switch (static_cast<GraphNodeType>(type)) {
    case GraphNodeType::kKernel: return "kernel";
    case GraphNodeType::kMemcpy: return "memcpy";
    case GraphNodeType::kMemset: return "memset";
    case GraphNodeType::kHost: return "host";
    case GraphNodeType::kGraph: return "child graph";
    case GraphNodeType::kEmpty: return "empty";
    case GraphNodeType::kWaitEvent: return "wait event";
    case GraphNodeType::kEventRecord: return "event record";
    case GraphNodeType::kExternalSemaphoreSignal: return "semaphore signal";
    case GraphNodeType::kExternalSemaphoreWait: return "semaphore wait";
    case GraphNodeType::kMemAlloc: return "mem alloc";
    case GraphNodeType::kMemFree: return "mem free";
    case GraphNodeType::kBatchMemOp: return "batch mem op";
    case GraphNodeType::kConditional: return "conditional";
  }
  return unknown(type);
}

std::string capture_mode_name(uint8_t mode) {
  switch (mode) {
    case 0: return "global";
    case 1: return "thread-local";
    case 2: return "relaxed";
  }
  return unknown(mode);
}

std::string graph_exec_action_name(uint8_t action) {
  switch (static_cast<GraphExecAction>(action)) {
    case GraphExecAction::kInstantiate: return "instantiate";
    case GraphExecAction::kUpdate: return "update";
    case GraphExecAction::kUpload: return "upload";
    case GraphExecAction::kDestroy: return "destroy";
    case GraphExecAction::kGraphDestroy: return "graph destroy";
  }
  return unknown(action);
}

std::string allocation_kind_name(uint8_t kind) {
  switch (static_cast<AllocationKind>(kind)) {
    case AllocationKind::kDevice: return "device";
    case AllocationKind::kPool: return "stream-ordered";
    case AllocationKind::kManaged: return "managed";
    case AllocationKind::kPinnedHost: return "pinned host";
    case AllocationKind::kRegisteredHost: return "registered host";
    case AllocationKind::kPhysical: return "VMM physical";
    case AllocationKind::kMapping: return "VMM mapping";
    case AllocationKind::kAddressRange: return "VMM address range";
  }
  return unknown(kind);
}

std::string memory_action_name(uint8_t action) {
  switch (static_cast<MemoryAction>(action)) {
    case MemoryAction::kAcquire: return "acquire";
    case MemoryAction::kRelease: return "release";
    case MemoryAction::kSetAccess: return "set access";
    case MemoryAction::kTrim: return "trim";
  }
  return unknown(action);
}

std::string wait_object_kind_name(uint8_t kind) {
  switch (static_cast<WaitObjectKind>(kind)) {
    case WaitObjectKind::kNone: return "none";
    case WaitObjectKind::kMutex: return "mutex";
    case WaitObjectKind::kCondition: return "condition";
    case WaitObjectKind::kSemaphore: return "semaphore";
    case WaitObjectKind::kThread: return "thread";
    case WaitObjectKind::kPipe: return "pipe";
    case WaitObjectKind::kSocket: return "socket";
    case WaitObjectKind::kFile: return "file";
    case WaitObjectKind::kCharDevice: return "char-device";
    case WaitObjectKind::kEventFd: return "eventfd";
    case WaitObjectKind::kOtherFd: return "other-fd";
    case WaitObjectKind::kChildProcess: return "child";
    case WaitObjectKind::kFutex: return "futex";
    case WaitObjectKind::kEpoll: return "epoll";
  }
  return unknown(kind);
}

std::string vendor_name(uint8_t vendor) {
  switch (static_cast<Vendor>(vendor)) {
    case Vendor::kUnknown: return "unknown";
    case Vendor::kNvidia: return "NVIDIA";
    case Vendor::kAmd: return "AMD";
  }
  return unknown(vendor);
}

std::string stream_handle_text(uint64_t stream) {
  if (stream == kStreamLegacy) return "legacy default";
  if (stream == kStreamPerThread) return "per-thread default";
  return hex(stream);
}

}  // namespace proflaunch::tools
