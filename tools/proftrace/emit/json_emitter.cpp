#include "tools/proftrace/emit/json_emitter.h"

#include "tools/proftrace/timeline/time_math.h"

namespace proflaunch::tools::emit {

using timeline::difference_ns;

JsonWriter& JsonEmitter::next_event() {
  if (events_ > 0) writer_.raw(",\n");
  ++events_;
  return writer_;
}

void JsonEmitter::name(timeline::Str text) {
  if (text.iid == 0) return writer_.quoted(text.text);
  if (quoted_.size() <= text.iid) quoted_.resize(text.iid + 1);
  std::string& quoted = quoted_[text.iid];
  if (quoted.empty()) quoted = json_quoted(text.text);
  writer_.raw(quoted);
}

void JsonEmitter::track(timeline::TrackRef track) {
  writer_.raw(",\"pid\":");
  writer_.number(track.pid);
  writer_.raw(",\"tid\":");
  writer_.number(track.tid);
}

void JsonEmitter::args(const timeline::Args* args, const timeline::StackRef& stack) {
  writer_.raw(",\"args\":{");
  bool first = true;
  if (args != nullptr) {
    for (const timeline::Arg& arg : *args) {
      const std::string* stack_text = nullptr;
      if (arg.type == timeline::ArgType::kStack) {
        if (stack.empty()) continue;
        stack_text = &stack_args_.json(*stack.section, stack.api, stack.stack);
        if (stack_text->empty()) continue;
      }
      if (!first) writer_.put(',');
      first = false;
      writer_.put('"');
      writer_.raw(arg.key);
      writer_.raw("\":");
      switch (arg.type) {
        case timeline::ArgType::kInt: writer_.number(arg.i); break;
        case timeline::ArgType::kUint: writer_.number(arg.u); break;
        case timeline::ArgType::kDouble: writer_.fixed3(arg.d); break;
        case timeline::ArgType::kBool: writer_.raw(arg.i != 0 ? "true" : "false"); break;
        case timeline::ArgType::kString: name(arg.s); break;
        case timeline::ArgType::kDim3:  // [x,y,z], as Kineto writes grid and block
          writer_.put('[');
          writer_.number(arg.dim.x);
          writer_.put(',');
          writer_.number(arg.dim.y);
          writer_.put(',');
          writer_.number(arg.dim.z);
          writer_.put(']');
          break;
        case timeline::ArgType::kStringList:
          writer_.put('[');
          for (size_t i = 0; i < arg.list_size; ++i) {
            if (i != 0) writer_.put(',');
            name(arg.list[i]);
          }
          writer_.put(']');
          break;
        case timeline::ArgType::kStack: writer_.raw(*stack_text); break;
      }
    }
  }
  writer_.put('}');
}

void JsonEmitter::timestamp(int64_t timeline_ns) {
  writer_.microseconds(timeline::shift_ns(static_cast<uint64_t>(timeline_ns), origin_shift_ns_, 0));
}

// Kineto's base time: Unix time floored to a multiple of 7,889,238 s (three
// months), the same for every rank that records in the same quarter, so
// that files written apart share one origin (HTA lines ranks up by `ts`
// alone) while `ts` stays below 2^53 ns, exact as a double.
constexpr int64_t kKinetoBaseTimeStepNs = int64_t{7'889'238} * 1'000'000'000;

void JsonEmitter::clock(const timeline::TimelineInfo& info) {
  if (!info.wall_minus_monotonic_ns) return;  // no snapshot: relative to the start, as before
  const int64_t wall_start_ns =
      timeline::shift_ns(static_cast<uint64_t>(info.base_ns), *info.wall_minus_monotonic_ns, 0);
  int64_t base_time_ns = wall_start_ns - wall_start_ns % kKinetoBaseTimeStepNs;
  if (wall_start_ns < 0) base_time_ns -= kKinetoBaseTimeStepNs;  // a broken clock: still floor
  origin_shift_ns_ = timeline::difference_ns(wall_start_ns, base_time_ns);
  writer_.raw("\n\"baseTimeNanoseconds\": ");
  writer_.number(base_time_ns);
  // Not Kineto's: what turns ts back into the reference host's
  // CLOCK_MONOTONIC (ts x 1000 + baseTimeNanoseconds - this), the clock of
  // every other output.
  writer_.raw(",\n\"realtimeMinusMonotonicNanoseconds\": ");
  writer_.number(*info.wall_minus_monotonic_ns);
  writer_.put(',');
}

void JsonEmitter::begin(const timeline::TimelineInfo& info) {
  // Kineto's top-level keys, before traceEvents: HTA's streaming metadata
  // reader stops at traceEvents.
  writer_.raw("{\"schemaVersion\":1,");
  clock(info);
  if (info.metadata != nullptr) {
    if (info.metadata->distributed) distributed_info(*info.metadata->distributed);
    device_properties(info.metadata->devices);
  }
  writer_.raw("\n\"traceEvents\":[\n");
}

void JsonEmitter::distributed_info(const timeline::DistributedInfo& info) {
  // Spaced as Kineto writes it: HTA finds a file's rank with the regular
  // expression "rank":\s+(\d+), not by parsing (a "rank":3 is rank 0 to it).
  writer_.raw("\n\"distributedInfo\": {");
  if (info.collectives) writer_.raw("\"backend\": \"nccl\", ");
  writer_.raw("\"rank\": ");
  writer_.number(info.rank);
  if (info.world_size > 0) {
    writer_.raw(", \"world_size\": ");
    writer_.number(info.world_size);
  }
  writer_.raw("},");
}

void JsonEmitter::device_properties(const std::vector<timeline::GpuProperties>& devices) {
  // Kineto's keys (cudaDeviceProp's names), each only when DeviceInfo has
  // it: it has no maxThreadsPerBlock, and 0 means a query failed.
  writer_.raw("\n\"deviceProperties\":[");
  for (size_t i = 0; i < devices.size(); ++i) {
    const timeline::GpuProperties& device = devices[i];
    const format::DeviceInfoRecord& d = device.info;
    writer_.raw(i == 0 ? "\n{\"id\":" : ",\n{\"id\":");
    writer_.number(device.ordinal);
    if (!device.name.empty()) {
      writer_.raw(",\"name\":");
      writer_.quoted(device.name);
    }
    auto field = [&](const char* key, uint64_t value) {
      if (value == 0) return;
      writer_.raw(",\"");
      writer_.raw(key);
      writer_.raw("\":");
      writer_.number(value);
    };
    field("totalGlobalMem", d.total_memory_bytes);
    if (d.compute_capability_major != 0) {
      writer_.raw(",\"computeMajor\":");
      writer_.number(uint64_t{d.compute_capability_major});
      writer_.raw(",\"computeMinor\":");
      writer_.number(uint64_t{d.compute_capability_minor});
    }
    field("maxThreadsPerMultiprocessor", d.max_threads_per_multiprocessor);
    field("regsPerBlock", d.registers_per_block);
    field("regsPerMultiprocessor", d.registers_per_multiprocessor);
    field("warpSize", d.warp_size);
    field("sharedMemPerBlock", d.shared_bytes_per_block);
    field("sharedMemPerMultiprocessor", d.shared_bytes_per_multiprocessor);
    field("sharedMemPerBlockOptin", d.shared_bytes_per_block_optin);
    field("numSms", d.multiprocessor_count);
    writer_.put('}');
  }
  writer_.raw("],");
}

void JsonEmitter::metadata_name(const char* what, uint32_t pid, uint32_t tid, std::string_view text) {
  JsonWriter& w = next_event();
  w.raw("{\"ph\":\"M\",\"name\":\"");
  w.raw(what);
  w.raw("\"");
  track({pid, tid});
  w.raw(",\"args\":{\"name\":");
  w.quoted(text);
  w.raw("}}");
}

void JsonEmitter::metadata_sort_index(const char* what, uint32_t pid, uint32_t tid, int64_t index) {
  JsonWriter& w = next_event();
  w.raw("{\"ph\":\"M\",\"name\":\"");
  w.raw(what);
  w.raw("\"");
  track({pid, tid});
  w.raw(",\"args\":{\"sort_index\":");
  w.number(index);
  w.raw("}}");
}

void JsonEmitter::process(const timeline::ProcessTrack& process) {
  metadata_name("process_name", process.pid, process.pid, process.name);
  metadata_sort_index("process_sort_index", process.pid, process.pid, process.sort_index);
}

void JsonEmitter::thread(const timeline::ThreadTrack& thread) {
  metadata_name("thread_name", thread.pid, thread.tid, thread.name);
  metadata_sort_index("thread_sort_index", thread.pid, thread.tid, thread.sort_index);
}

void JsonEmitter::slice(const timeline::Slice& slice) {
  JsonWriter& w = next_event();
  w.raw("{\"ph\":\"X\",\"cat\":");
  name(slice.category);
  w.raw(",\"name\":");
  name(slice.name);
  track(slice.track);
  w.raw(",\"ts\":");
  timestamp(slice.begin_ns);
  w.raw(",\"dur\":");
  w.microseconds(difference_ns(slice.end_ns, slice.begin_ns));
  if (slice.flow_out != 0 || slice.flow_in != 0) {
    w.raw(",\"bind_id\":");
    w.number(slice.flow_out != 0 ? slice.flow_out : slice.flow_in);
    w.raw(slice.flow_out != 0 ? ",\"flow_out\":true" : ",\"flow_in\":true");
  }
  args(slice.args, slice.stack);
  w.put('}');
}

void JsonEmitter::instant(const timeline::Instant& instant) {
  JsonWriter& w = next_event();
  w.raw(instant.scope == timeline::InstantScope::kProcess ? "{\"ph\":\"i\",\"s\":\"p\",\"cat\":"
                                                          : "{\"ph\":\"i\",\"s\":\"t\",\"cat\":");
  name(instant.category);
  w.raw(",\"name\":");
  name(instant.name);
  track(instant.track);
  w.raw(",\"ts\":");
  timestamp(instant.ns);
  args(instant.args, instant.stack);
  w.put('}');
}

void JsonEmitter::async_slice(const timeline::AsyncSlice& slice) {
  // "b", then "e" with the same id.
  for (const bool opening : {true, false}) {
    JsonWriter& w = next_event();
    w.raw(opening ? "{\"ph\":\"b\",\"cat\":" : "{\"ph\":\"e\",\"cat\":");
    name(slice.category);
    w.raw(",\"name\":");
    name(slice.name);
    w.raw(",\"id2\":{\"local\":");
    w.quoted(slice.id);
    w.put('}');
    track(slice.track);
    w.raw(",\"ts\":");
    timestamp(opening ? slice.begin_ns : slice.end_ns);
    if (opening) args(slice.args, {});
    w.put('}');
  }
}

void JsonEmitter::counter(const timeline::CounterSample& sample) {
  JsonWriter& w = next_event();
  w.raw("{\"ph\":\"C\",\"name\":");
  name(sample.name);
  track({sample.pid, sample.pid});
  w.raw(",\"ts\":");
  timestamp(sample.ns);
  w.raw(",\"args\":{");
  for (size_t i = 0; i < sample.value_count; ++i) {
    if (i != 0) w.put(',');
    w.put('"');
    w.raw(sample.values[i].key);
    w.raw("\":");
    w.number(sample.values[i].value);
  }
  w.raw("}}");
}

bool JsonEmitter::finish(std::string* error) {
  writer_.raw("\n]}\n");
  if (writer_.flush()) return true;
  *error = "writing the output failed";
  return false;
}

}  // namespace proflaunch::tools::emit
