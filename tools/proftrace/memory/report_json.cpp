// `proftrace memory --json`: the whole MemoryReport as one JSON document,
// also what the HTML page embeds. Times are ns since the report's base (the
// earliest section start); sizes are exact bytes.
#include <cinttypes>

#include "tools/proftrace/json_writer.h"
#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/memory/report_json.h"
#include "tools/proftrace/memory/report_writers.h"

namespace proflaunch::tools::memory {

namespace {

// Keys and commas for one JSON value being written.
class Json {
 public:
  explicit Json(JsonWriter& w) : w_(w) {}
  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(const char* name) {
    comma();
    w_.quoted(name);
    w_.put(':');
    after_key_ = true;
  }
  void number(uint64_t value) { value_prefix(); w_.number(value); }
  void number(int64_t value) { value_prefix(); w_.number(value); }
  void real(double value) { value_prefix(); w_.fixed3(value); }
  void string(std::string_view value) { value_prefix(); w_.quoted(value); }
  void null() { value_prefix(); w_.raw("null"); }
  void boolean(bool value) { value_prefix(); w_.raw(value ? "true" : "false"); }

 private:
  void comma() {
    if (!first_) w_.put(',');
    first_ = false;
  }
  void value_prefix() {
    if (after_key_) after_key_ = false;
    else comma();
  }
  void open(char c) {
    value_prefix();
    w_.put(c);
    first_ = true;
  }
  void close(char c) {
    w_.put(c);
    first_ = false;
  }
  JsonWriter& w_;
  bool first_ = true;
  bool after_key_ = false;
};

int64_t relative(uint64_t ns, uint64_t base_ns) { return static_cast<int64_t>(ns - base_ns); }

void totals(Json& j, const SpaceTotals& t) {
  j.begin_object();
  j.key("allocated_bytes"); j.number(t.allocated());
  j.key("reserved_bytes"); j.number(t.reserved());
  j.key("device_bytes"); j.number(t.device_bytes);
  j.key("pool_bytes"); j.number(t.pool_bytes);
  j.key("mapped_bytes"); j.number(t.mapped_bytes);
  j.key("managed_bytes"); j.number(t.managed_bytes);
  j.key("pool_reserved_bytes"); j.number(t.pool_reserved_bytes);
  j.key("physical_bytes"); j.number(t.physical_bytes);
  j.key("pinned_bytes"); j.number(t.pinned_bytes);
  j.key("registered_bytes"); j.number(t.registered_bytes);
  j.key("live_blocks"); j.number(t.live_blocks);
  j.end_object();
}

void allocation(Json& j, const AllocationView& a, uint64_t base_ns) {
  j.begin_object();
  j.key("space"); j.string(space_id(a.space));
  j.key("address"); j.string(hex_text(a.address));
  j.key("bytes"); j.number(a.bytes);
  j.key("kind"); j.string(allocation_kind_name(a.kind));
  j.key("time_ns"); j.number(relative(a.time_ns, base_ns));
  j.key("end_ns");
  if (a.end_ns != 0) j.number(relative(a.end_ns, base_ns));
  else j.null();
  j.key("api"); j.string(a.api);
  j.key("tid"); j.number(uint64_t{a.tid});
  j.key("thread"); j.string(a.thread);
  j.key("correlation_id"); j.number(a.correlation_id);
  j.key("stack");
  if (a.stack) j.string(*a.stack);
  else j.null();
  j.end_object();
}

void peak(Json& j, const char* name, const Peak& p, uint64_t base_ns) {
  j.key(name);
  j.begin_object();
  j.key("bytes"); j.number(p.bytes);
  j.key("time_ns"); j.number(p.bytes > 0 ? relative(p.time_ns, base_ns) : 0);
  j.end_object();
}

void space(Json& j, const SpaceReport& s, uint64_t base_ns) {
  j.begin_object();
  j.key("id"); j.string(space_id(s.key));
  j.key("section"); j.string(hex_text(s.key.section_id));
  j.key("pid"); j.number(uint64_t{s.pid});
  j.key("process"); j.string(s.process);
  j.key("device");
  if (s.is_host()) j.string("host");
  else j.number(int64_t{s.key.device});
  j.key("label"); j.string(space_label(s));
  j.key("device_name"); j.string(s.device_name);
  j.key("device_total_bytes"); j.number(s.device_total_bytes);
  j.key("first_ns"); j.number(relative(s.first_ns, base_ns));
  j.key("last_ns"); j.number(relative(s.last_ns, base_ns));
  j.key("events"); j.number(s.events);
  j.key("allocations"); j.number(s.allocations);
  j.key("frees"); j.number(s.frees);
  j.key("failures"); j.number(s.failures);
  peak(j, "peak_allocated", s.peak_allocated, base_ns);
  peak(j, "peak_reserved", s.peak_reserved, base_ns);
  peak(j, "peak_managed", s.peak_managed, base_ns);
  peak(j, "peak_pinned", s.peak_pinned, base_ns);
  j.key("at_end"); totals(j, s.at_end);
  j.key("live_at_peak_count"); j.number(s.live_at_peak_count);
  j.key("live_at_peak_unlisted_bytes"); j.number(s.live_at_peak_unlisted_bytes);
  j.key("live_at_peak");
  j.begin_array();
  for (const AllocationView& a : s.live_at_peak) allocation(j, a, base_ns);
  j.end_array();
  j.key("leaked_blocks"); j.number(s.leaked_blocks);
  j.key("leaked_bytes"); j.number(s.leaked_bytes);
  j.key("churn");
  j.begin_object();
  j.key("window_begin_ns"); j.number(relative(s.churn.window_begin_ns, base_ns));
  j.key("window_end_ns"); j.number(relative(s.churn.window_end_ns, base_ns));
  j.key("allocations"); j.number(s.churn.allocations);
  j.key("frees"); j.number(s.churn.frees);
  j.key("allocations_per_s"); j.real(s.churn.allocations_per_s());
  j.key("frees_per_s"); j.real(s.churn.frees_per_s());
  j.key("allocated_bytes_per_s"); j.real(s.churn.allocated_bytes_per_s());
  j.end_object();
  // Columns, then one row per sample: compact for long timelines.
  j.key("timeline_columns");
  j.begin_array();
  for (const char* column : kTimelineColumns) j.string(column);
  j.end_array();
  j.key("timeline");
  j.begin_array();
  for (const Sample& sample : s.timeline) {
    j.begin_array();
    for (uint64_t value : timeline_row(sample, base_ns)) j.number(value);
    j.end_array();
  }
  j.end_array();
  j.end_object();
}

void failure(Json& j, const FailureReport& f, const MemoryReport& report) {
  uint32_t pid = 0;
  for (const SpaceReport& s : report.spaces)
    if (s.key.section_id == f.space.section_id) pid = s.pid;
  j.begin_object();
  j.key("space"); j.string(space_id(f.space));
  j.key("time_ns"); j.number(relative(f.time_ns, report.base_ns));
  j.key("api"); j.string(f.api);
  j.key("kind"); j.string(allocation_kind_name(f.kind));
  j.key("result"); j.number(int64_t{f.result});
  j.key("result_name"); j.string(cuda_result_name(f.result));
  j.key("requested_bytes"); j.number(f.requested_bytes);
  j.key("tid"); j.number(uint64_t{f.tid});
  j.key("thread"); j.string(f.thread);
  j.key("correlation_id"); j.number(f.correlation_id);
  j.key("state"); totals(j, f.totals);
  j.key("largest_live");
  j.begin_array();
  for (const AllocationView& a : f.largest) allocation(j, a, report.base_ns);
  j.end_array();
  j.key("message"); j.string(failure_sentence(f, pid, report.base_ns));
  j.end_object();
}

}  // namespace

std::string space_id(const SpaceKey& key) {
  return hex_text(key.section_id) + (key.device == kHostSpace ? std::string("/host") : "/" + std::to_string(key.device));
}

std::string hex_text(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIx64, value);
  return text;
}

std::array<uint64_t, std::size(kTimelineColumns)> timeline_row(const Sample& sample, uint64_t base_ns) {
  const SpaceTotals& t = sample.totals;
  const uint64_t time_ns = sample.time_ns > base_ns ? sample.time_ns - base_ns : 0;
  return {time_ns, t.allocated(), t.reserved(), t.device_bytes,
          t.pool_bytes, t.mapped_bytes, t.managed_bytes, t.pool_reserved_bytes, t.physical_bytes, t.pinned_bytes,
          t.registered_bytes, t.live_blocks};
}

void write_report_json(const MemoryReport& report, const std::string& title, JsonWriter& writer) {
  Json j(writer);
  j.begin_object();
  j.key("format"); j.string("proftrace-memory-1");
  j.key("title"); j.string(title);
  j.key("base_ns"); j.number(report.base_ns);
  j.key("counters");
  j.begin_object();
  j.key("events"); j.number(report.counters.events);
  j.key("allocations"); j.number(report.counters.allocations);
  j.key("frees"); j.number(report.counters.frees);
  j.key("failed_allocations"); j.number(report.counters.failed_acquires);
  j.key("failed_frees"); j.number(report.counters.failed_releases);
  j.key("unknown_frees"); j.number(report.counters.unknown_frees);
  j.key("late_events"); j.number(report.late_events);
  j.key("lost_records"); j.number(report.lost_records);
  j.key("stacks_found"); j.number(report.stacks_found);
  j.end_object();
  j.key("spaces");
  j.begin_array();
  for (const SpaceReport& s : report.spaces) space(j, s, report.base_ns);
  j.end_array();
  j.key("failures");
  j.begin_array();
  for (const FailureReport& f : report.failures) failure(j, f, report);
  j.end_array();
  j.key("leaks");
  j.begin_array();
  for (const AllocationView& a : report.leaks) allocation(j, a, report.base_ns);
  j.end_array();
  j.key("intervals");
  j.begin_array();
  for (const AllocationView& a : report.intervals) allocation(j, a, report.base_ns);
  j.end_array();
  j.key("memory_info");
  j.begin_array();
  for (const MemoryInfoSample& m : report.memory_info) {
    j.begin_object();
    j.key("space"); j.string(space_id(m.space));
    j.key("time_ns"); j.number(relative(m.time_ns, report.base_ns));
    j.key("free_bytes"); j.number(m.free_bytes);
    j.key("total_bytes"); j.number(m.total_bytes);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

bool write_json_report(const MemoryReport& report, const std::string& title, std::FILE* out) {
  JsonWriter writer(out);
  write_report_json(report, title, writer);
  writer.put('\n');
  return writer.flush();
}

}  // namespace proflaunch::tools::memory
