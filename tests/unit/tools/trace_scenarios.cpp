#include "tests/unit/tools/trace_scenarios.h"

namespace proflaunch::testing {

using namespace proflaunch::format;

TracedProcess add_process(TraceBuilder& trace, uint64_t section, uint32_t pid, uint64_t start_ns,
                          const std::string& host, const std::string& command) {
  ProcessSpec spec;
  spec.pid = pid;
  spec.ppid = 1;
  spec.host = host;
  spec.argv = {command};
  spec.monotonic_ns = start_ns;
  // The wall clock at a multiple of Kineto's base-time step (three months):
  // the JSON's ts then counts from the process's start, as tests expect.
  spec.realtime_ns = kKinetoQuarterWallNs;
  trace.process(section, spec);
  TracedProcess p{section, pid, start_ns};
  p.launch_api = trace.api(section, "cuLaunchKernel", ApiDomain::kDriver);
  p.copy_api = trace.api(section, "cudaMemcpyAsync", ApiDomain::kRuntime);
  p.memset_api = trace.api(section, "cudaMemsetAsync", ApiDomain::kRuntime);
  p.sync_api = trace.api(section, "cudaDeviceSynchronize", ApiDomain::kRuntime);
  p.stream_create_api = trace.api(section, "cudaStreamCreate", ApiDomain::kRuntime);
  p.malloc_api = trace.api(section, "cudaMalloc", ApiDomain::kRuntime);
  return p;
}

KernelLaunchRecord launch(const TracedProcess& p, uint64_t correlation_id, uint64_t begin_ns,
                          uint64_t end_ns, uint64_t function, uint64_t stream, int32_t device) {
  KernelLaunchRecord record{};
  record.device = device;
  record.span = ApiSpan{begin_ns, end_ns, correlation_id, 0, p.launch_api, kApiAsync};
  record.function = function;
  record.stream = stream;
  record.grid = {64, 2, 1};
  record.block = {256, 1, 1};
  record.dynamic_shared_bytes = 1024;
  return record;
}

MemoryCopyRecord copy(const TracedProcess& p, uint64_t correlation_id, uint64_t begin_ns,
                      uint64_t end_ns, uint64_t bytes, uint64_t stream, int32_t device) {
  MemoryCopyRecord record{};
  record.device = device;
  record.span = ApiSpan{begin_ns, end_ns, correlation_id, 0, p.copy_api, kApiAsync};
  record.bytes = bytes;
  record.stream = stream;
  record.direction = static_cast<uint8_t>(CopyDirection::kHostToDevice);
  record.src_kind = static_cast<uint8_t>(MemoryKind::kPinnedHost);
  record.dst_kind = static_cast<uint8_t>(MemoryKind::kDevice);
  record.peer_device = -1;
  return record;
}

MemorySetRecord memset(const TracedProcess& p, uint64_t correlation_id, uint64_t begin_ns,
                       uint64_t end_ns, uint64_t bytes, uint64_t stream, int32_t device) {
  MemorySetRecord record{};
  record.device = device;
  record.span = ApiSpan{begin_ns, end_ns, correlation_id, 0, p.memset_api, kApiAsync};
  record.bytes = bytes;
  record.stream = stream;
  record.element_bytes = 1;
  record.dst_kind = static_cast<uint8_t>(MemoryKind::kDevice);
  return record;
}

GpuActivityRecord activity(uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns, uint64_t stream,
                           GpuActivityKind kind, int32_t device) {
  GpuActivityRecord record{};
  record.device = device;
  record.correlation_id = correlation_id;
  record.start_ns = start_ns;
  record.end_ns = end_ns;
  record.stream = stream;
  record.kind = static_cast<uint8_t>(kind);
  record.source = static_cast<uint8_t>(GpuTimingSource::kEvents);
  return record;
}

}  // namespace proflaunch::testing
