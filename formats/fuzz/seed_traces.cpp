#include "formats/fuzz/seed_traces.h"

#include "formats/trace_builder.h"

namespace proflaunch::format {
namespace {

template <typename T>
void append_record(std::vector<uint8_t>& out, const T& record) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(&record);
  out.insert(out.end(), bytes, bytes + sizeof record);
}

void add_events(TraceBuilder& trace, uint64_t section, uint32_t tid, uint64_t first_id) {
  const uint16_t launch_api = trace.api(section, "cuLaunchKernel", ApiDomain::kDriver);
  trace.function(section, 0x1000 + section, "_Z6kernelPfi");
  for (uint64_t i = 0; i < 4; ++i) {
    const uint64_t id = first_id + i;
    KernelLaunchRecord launch{};
    launch.span.begin_ns = 1000 * id;
    launch.span.end_ns = 1000 * id + 200;
    launch.span.correlation_id = id;
    launch.span.api = launch_api;
    launch.function = 0x1000 + section;
    launch.stream = kStreamLegacy;
    launch.grid = {64, 1, 1};
    launch.block = {256, 1, 1};
    trace.event(section, tid, launch);
    GpuActivityRecord activity{};
    activity.correlation_id = id;
    activity.start_ns = 1000 * id + 300;
    activity.end_ns = 1000 * id + 900;
    activity.stream = kStreamLegacy;
    activity.kind = static_cast<uint8_t>(GpuActivityKind::kKernel);
    trace.event(section, tid, activity);
  }
  MemoryCopyRecord copy{};
  copy.bytes = 4096;
  copy.span.correlation_id = first_id + 100;
  copy.direction = static_cast<uint8_t>(CopyDirection::kHostToDevice);
  trace.event(section, tid, copy);
  MemorySetRecord set{};
  set.bytes = 128;
  trace.event(section, tid + 1, set);
  SynchronizeRecord sync{};
  sync.target = static_cast<uint8_t>(SyncTarget::kDevice);
  trace.event(section, tid, sync);
  ObjectLifecycleRecord stream{};
  stream.object = static_cast<uint8_t>(ObjectKind::kStream);
  stream.action = static_cast<uint8_t>(LifecycleAction::kCreate);
  trace.event(section, tid, stream);
  LostRecord lost{};
  lost.count = 3;
  trace.event(section, tid, lost);
  trace.event(section, tid, ApiCallRecord{});
}

std::vector<uint8_t> two_process_trace(size_t chunk_bytes) {
  TraceBuilder trace(TraceBuilder::Options{chunk_bytes, 1, true});
  ProcessSpec first;
  first.pid = 100;
  first.argv = {"python", "train.py"};
  trace.process(1, first);
  trace.thread(1, 100, "main");
  trace.device(1, DeviceSpec{});
  ProcessSpec second;
  second.pid = 200;
  second.ppid = 100;
  second.flags = kProcessForked;
  second.parent_section_id = 1;
  trace.process(2, second);
  add_events(trace, 1, 100, 1);
  add_events(trace, 2, 201, 1);
  trace.section_end(1, 99999, 40, 3);
  return trace.bytes();
}

}  // namespace

std::vector<SeedTrace> seed_traces() {
  std::vector<SeedTrace> seeds;
  seeds.push_back({"two_processes_small_chunks", two_process_trace(256)});
  seeds.push_back({"two_processes_one_chunk_each", two_process_trace(1 << 20)});

  std::vector<uint8_t> truncated = two_process_trace(256);
  truncated.resize(truncated.size() - 17);
  seeds.push_back({"truncated_tail", truncated});

  std::vector<uint8_t> damaged = two_process_trace(256);
  damaged[damaged.size() / 2] ^= 0xFF;
  seeds.push_back({"damaged_middle", damaged});

  TraceBuilder empty;
  seeds.push_back({"header_only", empty.bytes()});

  // Content-mode seeds (see reader_fuzzer.cpp): 0xC7, chunk kind, then the
  // uncompressed records of one chunk.
  std::vector<uint8_t> events = {0xC7, 1};
  ThreadBatchRecord batch{header_for<ThreadBatchRecord>(), 77};
  append_record(events, batch);
  KernelLaunchRecord launch{};
  launch.header = header_for<KernelLaunchRecord>();
  launch.span.correlation_id = 1;
  append_record(events, launch);
  GpuActivityRecord activity{};
  activity.header = header_for<GpuActivityRecord>();
  activity.correlation_id = 1;
  append_record(events, activity);
  const uint8_t unknown[6] = {200, 0, 6, 0, 1, 2};  // a future kind, skipped by size
  events.insert(events.end(), unknown, unknown + sizeof unknown);
  seeds.push_back({"content_mode_events", events});

  std::vector<uint8_t> definitions = {0xC7, 0};
  StringDefRecord string{};
  string.header = RecordHeader{static_cast<uint16_t>(RecordKind::kStringDef), sizeof(StringDefRecord) + 5};
  string.id = 1;
  append_record(definitions, string);
  definitions.insert(definitions.end(), {'h', 'e', 'l', 'l', 'o'});
  ApiDefRecord api{};
  api.header = header_for<ApiDefRecord>();
  api.name_string = 1;
  append_record(definitions, api);
  seeds.push_back({"content_mode_definitions", definitions});
  return seeds;
}

}  // namespace proflaunch::format
