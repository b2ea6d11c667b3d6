#include "tools/proftrace/sql/sqlite_export.h"

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "formats/records.h"
#include "tools/proftrace/collective_text.h"
#include "tools/proftrace/demangle.h"
#include "tools/proftrace/record_text.h"
#include "tools/proftrace/sql/schema.h"
#include "tools/proftrace/sql/sqlite_database.h"
#include "tools/proftrace/interpret/blocking_calls.h"
#include "tools/proftrace/stacks/stack_formatter.h"
#include "tools/proftrace/interpret/host_function_names.h"
#include "tools/proftrace/interpret/interpreter.h"
#include "tools/proftrace/interpret/nvtx_ranges.h"

namespace proflaunch::tools::sql {

namespace {

using namespace format;

// Rows per transaction: large enough that commits cost nothing measurable,
// small enough that a transaction's dirty pages stay a few MB.
constexpr uint64_t kRowsPerTransaction = 200'000;
// functions.id of host functions the shim did not name (above any kernel's).
constexpr int64_t kHostFunctionIdBase = 1'000'000'000;

std::optional<int64_t> unless_negative(int32_t value) {
  if (value < 0) return std::nullopt;
  return value;
}

std::optional<int64_t> nonzero(uint64_t value) {
  if (value == 0) return std::nullopt;
  return static_cast<int64_t>(value);
}

std::string uuid_text(const uint8_t (&uuid)[16]) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  bool any = false;
  for (uint8_t byte : uuid) {
    any = any || byte != 0;
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return any ? text : "";
}

struct Statements {
  explicit Statements(sqlite3* db)
      : process(db, "INSERT INTO processes VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18)"),
        thread(db, "INSERT INTO threads VALUES (?1,?2,?3,?4)"),
        device(db, "INSERT INTO devices VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"),
        api(db, "INSERT INTO apis VALUES (?1,?2,?3)"),
        function(db, "INSERT INTO functions VALUES (?1,?2,?3)"),
        stack(db, "INSERT INTO stacks VALUES (?1,?2,?3,?4)"),
        frame(db, "INSERT INTO frames VALUES (?1,?2)"),
        stack_frame(db, "INSERT INTO stack_frames VALUES (?1,?2,?3)"),
        api_call(db, "INSERT INTO api_calls VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,NULL)"),
        api_call_stack(db, "UPDATE api_calls SET stack_id = ?2 WHERE id = ?1"),
        api_count(db, "INSERT INTO api_counts VALUES (NULL,?1,?2,?3,?4,?5,?6)"),
        kernel(db, "INSERT INTO kernels VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"),
        copy(db, "INSERT INTO copies VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)"),
        memset(db, "INSERT INTO memsets VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"),
        memory(db, "INSERT INTO memory_operations VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)"),
        gpu(db, "INSERT INTO gpu_activities VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)"),
        nvtx(db, "INSERT INTO nvtx_ranges VALUES (NULL,?1,?2,?3,?4,?5,?6,?7)"),
        graph_node(db, "INSERT INTO graph_nodes VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)"),
        communicator(db, "INSERT INTO communicators VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)"),
        collective(db, "INSERT INTO collectives VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17)"),
        group(db, "INSERT INTO collective_groups VALUES (NULL,?1,?2,?3,?4,?5,?6,?7)"),
        lost(db, "INSERT INTO lost VALUES (NULL,?1,?2,?3,?4,?5,?6)"),
        gpu_metric(db, "INSERT INTO gpu_metrics VALUES (NULL,?1,?2,?3,?4,?5,?6,?7)"),
        gpu_metric_unsupported(db, "INSERT INTO gpu_metrics_unsupported VALUES (NULL,?1,?2,?3)"),
        metadata(db, "INSERT INTO metadata VALUES (?1,?2)"),
        cpu_sample(db, "INSERT INTO cpu_samples VALUES (NULL,?1,?2,?3,?4,?5,?6)"),
        blocking_call(db, "INSERT INTO blocking_calls VALUES (NULL,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)"),
        cpu_sampling(db, "INSERT INTO cpu_sampling VALUES (NULL,?1,?2,?3,?4,?5,?6)") {}

  Statement process, thread, device, api, function, stack, frame, stack_frame, api_call, api_call_stack, api_count,
      kernel, copy, memset, memory, gpu, nvtx, graph_node, communicator, collective, group, lost, gpu_metric,
      gpu_metric_unsupported, metadata, cpu_sample, blocking_call, cpu_sampling;
};

// Rows as the interpretation pass hands the events over, in file order
// (InterpretOptions::calls_in_file_order): a call's row first, its stack
// when the CallStack after it is read.
class Exporter final : public interpret::Consumer {
 public:
  Exporter(Database& db, const TraceModel& model) : db_(db), model_(model), rows_(db.handle()) {}

  void write_definitions(const std::vector<InputTrace>& inputs);
  bool keep_going() override { return failure_.empty(); }
  // Rethrows what a callback caught (the reader's pass is not unwound by an
  // exception).
  void check() const {
    if (!failure_.empty()) throw SqliteError(failure_);
  }
  void finish();
  ExportCounts counts() const { return counts_; }

  void on_any_call(const interpret::Call& call) override {
    guard([&] { api_call(call); });
  }
  void on_call_stacks(const interpret::Call& call) override {
    guard([&] {
      if (const auto stack = stack_id(*call.section->model, call.stacks.native, call.stacks.python))
        rows_.api_call_stack.bind(1, api_call_id(call)).bind(2, *stack).run();
    });
  }
  void on_gpu_work_read(const interpret::GpuWork& work) override {
    guard([&] { gpu_activity(*work.section->model, work.activity); });
  }
  void on_graph_node(const interpret::Event<GraphNodeRecord>& e) override {
    guard([&] { graph_node(*e.section->model, e.record); });
  }
  void on_api_count(const interpret::Event<ApiCountRecord>& e) override {
    guard([&] {
      const SectionModel& section = *e.section->model;
      rows_.api_count.bind(1, process_id(section.section_id)).bind(2, thread_id(section.section_id, e.tid));
      rows_.api_count.bind(3, api_id(section, e.record.api)).bind(4, static_cast<int64_t>(e.record.count));
      rows_.api_count.bind(5, static_cast<int64_t>(e.record.first_ns)).bind(6, static_cast<int64_t>(e.record.last_ns));
      rows_.api_count.run();
    });
  }
  void on_lost(const interpret::Event<LostRecord>& e) override {
    guard([&] {
      const uint64_t s = e.section->id;
      rows_.lost.bind(1, process_id(s)).bind(2, thread_id(s, e.tid)).bind(3, lost_reason_name(e.record.reason));
      rows_.lost.bind(4, static_cast<int64_t>(e.record.first_ns)).bind(5, static_cast<int64_t>(e.record.last_ns));
      rows_.lost.bind(6, static_cast<int64_t>(e.record.count)).run();
    });
  }
  // Device metrics: one row per sample, on the sampler's DeviceInfo row.
  void on_gpu_metric_sample(const interpret::Event<GpuMetricSampleRecord>& e) override {
    guard([&] {
      const SectionModel& section = *e.section->model;
      auto def = section.gpu_metrics.find(e.record.metric);
      if (def == section.gpu_metrics.end()) return;
      auto device = device_ids_.find({section.section_id, def->second.device});
      if (device == device_ids_.end()) return;
      Statement& s = rows_.gpu_metric;
      s.bind(1, device->second).bind(2, section.string(def->second.name_string));
      s.bind(3, section.string(def->second.unit_string));
      if (def->second.link == 0xFFFF) s.bind_null(4);
      else s.bind(4, int64_t{def->second.link});
      s.bind(5, def->second.kind == uint8_t(GpuMetricKind::kInstant) ? "instant" : "gauge");
      s.bind(6, static_cast<int64_t>(e.record.time_ns)).bind(7, static_cast<int64_t>(e.record.value)).run();
    });
  }
  void on_operation_read(const interpret::Operation& op) override {
    guard([&] { operation(op); });
  }
  void on_memory_operation(const interpret::Event<MemoryOperationRecord>& e) override {
    guard([&] { memory_operation(*e.section->model, e.record); });
  }
  void on_collective_comm(const interpret::Event<CollectiveCommRecord>& e) override {
    guard([&] { communicator(*e.section->model, e.record); });
  }
  void on_collective(const interpret::Event<CollectiveRecord>& e) override {
    guard([&] { collective(*e.section->model, e.record); });
  }
  void on_collective_group(const interpret::Event<CollectiveGroupRecord>& e) override {
    guard([&] { collective_group(*e.section->model, e.record); });
  }
  void on_nvtx(const interpret::NvtxEvent& e) override {
    guard([&] { nvtx(e); });
  }
  void on_cpu_sample(const interpret::CpuSampleEvent& e) override {
    guard([&] {
      const SectionModel& section = *e.section->model;
      const uint64_t s = section.section_id;
      Statement& r = rows_.cpu_sample;
      r.bind(1, process_id(s)).bind(2, thread_id(s, e.tid)).bind(3, static_cast<int64_t>(e.record.time_ns));
      r.bind(4, static_cast<int64_t>(e.record.thread_cpu_ns));
      r.bind(5, int64_t{(e.record.flags & kCpuSampleInTracedCall) != 0});
      r.bind(6, stack_id(section, e.stacks.native, e.stacks.python)).run();
      ++counts_.cpu_samples;
    });
  }
  void on_blocking_call(const interpret::BlockingCallEvent& e) override {
    guard([&] {
      const SectionModel& section = *e.section->model;
      const uint64_t s = section.section_id;
      const BlockingCallRecord& c = e.record;
      Statement& r = rows_.blocking_call;
      r.bind(1, process_id(s)).bind(2, thread_id(s, e.tid)).bind(3, api_id(section, c.span.api));
      r.bind(4, static_cast<int64_t>(c.span.begin_ns)).bind(5, static_cast<int64_t>(c.span.end_ns));
      r.bind(6, interpret::wait_object_kind_name(c.object_kind)).bind(7, static_cast<int64_t>(c.object));
      r.bind(8, int64_t{c.span.result}).bind(9, int64_t{c.error});
      r.bind(10, stack_id(section, e.stacks.native, e.stacks.python)).run();
      ++counts_.blocking_calls;
    });
  }
  void on_cpu_sampling_info(const interpret::Event<CpuSamplingInfoRecord>& e) override {
    guard([&] {
      static constexpr const char* kMechanisms[] = {"none", "thread_cpu_timer", "perf_event"};
      static constexpr const char* kStates[] = {"off", "on", "stepped_back", "unavailable"};
      const CpuSamplingInfoRecord& i = e.record;
      Statement& r = rows_.cpu_sampling;
      r.bind(1, process_id(e.section->id)).bind(2, static_cast<int64_t>(i.time_ns)).bind(3, int64_t{i.hz});
      r.bind(4, std::string_view(i.mechanism < 3 ? kMechanisms[i.mechanism] : "unknown"));
      r.bind(5, std::string_view(i.state < 4 ? kStates[i.state] : "unknown")).bind(6, int64_t{i.signal_number}).run();
    });
  }

 private:
  // Runs one event's inserts; the first failure stops the pass.
  template <typename Insert>
  void guard(Insert&& insert) {
    if (!failure_.empty()) return;
    try {
      insert();
      row();
    } catch (const std::exception& e) {
      failure_ = e.what();
    }
  }
  // api_calls.id: the call's place among the calls, in file order.
  static int64_t api_call_id(const interpret::Call& call) { return static_cast<int64_t>(call.ordinal) + 1; }
  void api_call(const interpret::Call& call);
  void gpu_activity(const SectionModel& section, const GpuActivityRecord& gpu);
  void graph_node(const SectionModel& section, const GraphNodeRecord& n);
  void operation(const interpret::Operation& op);
  void memory_operation(const SectionModel& section, const MemoryOperationRecord& m);
  void communicator(const SectionModel& section, const CollectiveCommRecord& c);
  void collective(const SectionModel& section, const CollectiveRecord& c);
  void collective_group(const SectionModel& section, const CollectiveGroupRecord& g);
  void nvtx(const interpret::NvtxEvent& e);
  void close_range(const interpret::RangeTracker::Open& open, std::optional<int64_t> end_ns, uint64_t section_id);
  int64_t process_id(uint64_t section_id) const { return process_ids_.at(section_id); }
  std::optional<int64_t> thread_id(uint64_t section_id, uint32_t tid);
  std::optional<int64_t> device_id(uint64_t section_id, int32_t device) const;
  int64_t api_id(const SectionModel& section, uint16_t api);
  std::optional<int64_t> function_id(const SectionModel& section, uint64_t handle, uint64_t at_ns);
  int64_t host_function_id(const SectionModel& section, uint64_t address, uint64_t at_ns, bool launched);
  std::optional<int64_t> stack_id(const SectionModel& section, uint32_t native, uint32_t python);
  void row() {
    if (++rows_in_transaction_ < kRowsPerTransaction) return;
    db_.exec("COMMIT; BEGIN");
    rows_in_transaction_ = 0;
  }

  Database& db_;
  const TraceModel& model_;
  Statements rows_;
  StackFormatter stack_formatter_;
  interpret::HostFunctionNames host_function_names_;
  interpret::RangeTracker ranges_;
  std::map<uint64_t, int64_t> process_ids_;  // by section id
  std::map<std::pair<uint64_t, uint32_t>, int64_t> thread_ids_;
  std::map<std::pair<uint64_t, int32_t>, int64_t> device_ids_;
  std::map<std::pair<uint64_t, uint16_t>, int64_t> api_ids_;  // by (section, ApiDef number)
  std::unordered_map<std::string, int64_t> api_by_name_;
  std::unordered_map<std::string, int64_t> function_by_name_;
  std::unordered_map<std::string, int64_t> host_function_by_name_;  // rows of kHostFunctionIdBase + n
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, std::optional<int64_t>> stack_ids_;
  std::unordered_map<std::string, int64_t> frame_by_name_;
  int64_t next_thread_id_ = 1;
  int64_t call_id_ = 0;  // the api_calls row of the call being written
  uint64_t rows_in_transaction_ = 0;
  ExportCounts counts_;
  std::string failure_;
};

void Exporter::write_definitions(const std::vector<InputTrace>& inputs) {
  db_.exec("BEGIN");
  rows_.metadata.bind(1, std::string_view("schema_version")).bind(2, std::to_string(kSchemaVersion)).run();
  rows_.metadata.bind(1, std::string_view("tool_version")).bind(2, std::string_view(PROFLAUNCH_VERSION)).run();
  rows_.metadata.bind(1, std::string_view("clock")).bind(2, std::string_view("CLOCK_MONOTONIC ns of each traced host")).run();

  const std::vector<const SectionModel*> ordered = model_.ordered();
  int64_t next = 1;
  for (const SectionModel* section : ordered) process_ids_[section->section_id] = next++;
  for (const SectionModel* section : ordered) {
    Statement& s = rows_.process;
    s.bind(1, process_id(section->section_id)).bind_bits(2, section->section_id);
    s.bind(3, std::string_view(section->input_index < inputs.size() ? inputs[section->input_index].path : ""));
    if (const auto& p = section->process) {
      const uint64_t parent_section = p->parent_section_id;  // a packed field: no reference to it
      const auto parent = process_ids_.find(parent_section);
      s.bind(4, int64_t{p->pid}).bind(5, int64_t{p->ppid});
      s.bind(6, parent != process_ids_.end() && parent_section != 0 ? std::optional<int64_t>(parent->second)
                                                                            : std::nullopt);
      s.bind(7, section->host()).bind(8, section->command_line()).bind(9, section->string(p->executable_string));
      s.bind(10, unless_negative(p->rank)).bind(11, unless_negative(p->local_rank)).bind(12, unless_negative(p->world_size));
      s.bind(13, int64_t{(p->flags & kProcessForked) != 0}).bind(14, int64_t{(p->flags & kProcessAfterExec) != 0});
      s.bind(15, static_cast<int64_t>(p->monotonic_ns)).bind(16, static_cast<int64_t>(p->realtime_ns));
    } else {
      for (int i : {4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 16}) s.bind_null(i);
      s.bind(13, int64_t{0}).bind(14, int64_t{0});
    }
    if (section->end) {
      s.bind(17, static_cast<int64_t>(section->end->end_ns)).bind(18, static_cast<int64_t>(section->end->records_dropped));
    } else {
      s.bind_null(17).bind_null(18);
    }
    s.run();
    ++counts_.processes;
    for (const auto& [tid, infos] : section->threads) thread_id(section->section_id, tid);
    for (const auto& [ordinal, device] : section->devices) {
      const int64_t id = static_cast<int64_t>(device_ids_.size()) + 1;
      device_ids_[{section->section_id, ordinal}] = id;
      const std::string uuid = uuid_text(device.uuid);
      rows_.device.bind(1, id).bind(2, process_id(section->section_id)).bind(3, int64_t{ordinal});
      rows_.device.bind(4, vendor_name(device.vendor)).bind(5, section->string(device.name_string));
      rows_.device.bind(6, int64_t{device.multiprocessor_count}).bind(7, static_cast<int64_t>(device.total_memory_bytes));
      if (uuid.empty()) rows_.device.bind_null(8);
      else rows_.device.bind(8, uuid);
      rows_.device.run();
    }
    for (const auto& [metric, def] : section->gpu_metrics) {
      auto device = device_ids_.find({section->section_id, def.device});
      if (def.unsupported_reason_string == 0 || device == device_ids_.end()) continue;
      rows_.gpu_metric_unsupported.bind(1, device->second).bind(2, section->string(def.name_string));
      rows_.gpu_metric_unsupported.bind(3, section->string(def.unsupported_reason_string)).run();
    }
  }
}

std::optional<int64_t> Exporter::thread_id(uint64_t section_id, uint32_t tid) {
  if (tid == 0) return std::nullopt;  // records before the chunk's first ThreadBatch
  auto [it, inserted] = thread_ids_.try_emplace({section_id, tid}, next_thread_id_);
  if (!inserted) return it->second;
  ++next_thread_id_;
  ++counts_.threads;
  const SectionModel* section = model_.find(section_id);
  const std::string_view name = section != nullptr ? section->thread_name(tid) : std::string_view();
  rows_.thread.bind(1, it->second).bind(2, process_id(section_id)).bind(3, int64_t{tid});
  if (name.empty()) rows_.thread.bind_null(4);
  else rows_.thread.bind(4, name);
  rows_.thread.run();
  return it->second;
}

std::optional<int64_t> Exporter::device_id(uint64_t section_id, int32_t device) const {
  auto it = device_ids_.find({section_id, device});
  if (it == device_ids_.end()) return std::nullopt;
  return it->second;
}

int64_t Exporter::api_id(const SectionModel& section, uint16_t api) {
  auto it = api_ids_.find({section.section_id, api});
  if (it != api_ids_.end()) return it->second;
  // One row per name across processes: the same API is one thing to group by.
  std::string name = section.api_name(api);
  auto [by_name, inserted] = api_by_name_.try_emplace(name, static_cast<int64_t>(api_by_name_.size()) + 1);
  if (inserted) {
    const auto def = section.apis.find(api);
    rows_.api.bind(1, by_name->second).bind(2, name);
    rows_.api.bind(3, def != section.apis.end() ? api_domain_name(def->second.domain) : std::string("unknown"));
    rows_.api.run();
  }
  api_ids_[{section.section_id, api}] = by_name->second;
  return by_name->second;
}

std::optional<int64_t> Exporter::function_id(const SectionModel& section, uint64_t handle, uint64_t at_ns) {
  const std::string_view mangled = section.function_name(handle, at_ns);
  if (mangled.empty()) return std::nullopt;
  auto [it, inserted] = function_by_name_.try_emplace(std::string(mangled), static_cast<int64_t>(function_by_name_.size()) + 1);
  if (inserted) rows_.function.bind(1, it->second).bind(2, mangled).bind(3, demangle(mangled)).run();
  return it->second;
}

// A host function's row is named as convert names it
// (interpret/host_function_names.h). A launched one the shim named
// (FunctionDef: an exported symbol or object+offset) keeps the row and id it
// always had, its mangled_name the shim's name; one without (HIP's, a graph's
// host node) gets an id from kHostFunctionIdBase, so that its row moves no
// kernel's id, with its name in both columns.
int64_t Exporter::host_function_id(const SectionModel& section, uint64_t address, uint64_t at_ns, bool launched) {
  const std::string name = host_function_names_.name(section, address, at_ns);
  const std::string_view recorded = launched ? section.function_name(address, at_ns) : std::string_view();
  if (!recorded.empty()) {
    auto [it, inserted] =
        function_by_name_.try_emplace(std::string(recorded), static_cast<int64_t>(function_by_name_.size()) + 1);
    if (inserted) rows_.function.bind(1, it->second).bind(2, recorded).bind(3, name).run();
    return it->second;
  }
  auto [it, inserted] = host_function_by_name_.try_emplace(
      name, kHostFunctionIdBase + static_cast<int64_t>(host_function_by_name_.size()) + 1);
  if (inserted) rows_.function.bind(1, it->second).bind(2, name).bind(3, name).run();
  return it->second;
}

std::optional<int64_t> Exporter::stack_id(const SectionModel& section, uint32_t native, uint32_t python) {
  auto [it, inserted] = stack_ids_.try_emplace({section.section_id, native, python});
  if (!inserted) return it->second;
  const std::vector<std::string> frames = stack_formatter_.frames(section, native, python);  // root first
  if (frames.empty()) return std::nullopt;
  const int64_t id = static_cast<int64_t>(++counts_.stacks);
  it->second = id;
  const auto* native_info = section.stacks.native(native);
  const auto* python_info = section.stacks.python(python);
  const bool truncated = (native_info != nullptr && native_info->truncated) || (python_info != nullptr && python_info->truncated);
  rows_.stack.bind(1, id).bind(2, process_id(section.section_id)).bind(3, static_cast<int64_t>(frames.size()));
  rows_.stack.bind(4, int64_t{truncated}).run();
  // depth 0 is the innermost frame: the code that made the call.
  for (size_t depth = 0; depth < frames.size(); ++depth) {
    const std::string& frame = frames[frames.size() - 1 - depth];
    auto [f, new_frame] = frame_by_name_.try_emplace(frame, static_cast<int64_t>(frame_by_name_.size()) + 1);
    if (new_frame) rows_.frame.bind(1, f->second).bind(2, frame).run();
    rows_.stack_frame.bind(1, id).bind(2, static_cast<int64_t>(depth)).bind(3, f->second).run();
  }
  return id;
}

void Exporter::api_call(const interpret::Call& call) {
  const SectionModel& section = *call.section->model;
  const ApiSpan& span = call.span;
  call_id_ = api_call_id(call);
  Statement& s = rows_.api_call;
  s.bind(1, call_id_).bind(2, process_id(section.section_id)).bind(3, thread_id(section.section_id, call.tid));
  s.bind(4, api_id(section, span.api)).bind(5, std::string_view(interpret::call_kind_name(call.kind)));
  s.bind(6, static_cast<int64_t>(span.begin_ns)).bind(7, static_cast<int64_t>(span.end_ns));
  s.bind(8, static_cast<int64_t>(span.correlation_id)).bind(9, int64_t{span.result}).bind(10, int64_t{span.flags});
  s.bind(11, int64_t{(span.flags & kApiCaptured) != 0}).bind(12, int64_t{(span.flags & kApiCarried) != 0});
  s.run();
  ++counts_.api_calls;
}

void Exporter::close_range(const interpret::RangeTracker::Open& open, std::optional<int64_t> end_ns, uint64_t section_id) {
  Statement& s = rows_.nvtx;
  s.bind(1, process_id(section_id)).bind(2, thread_id(section_id, open.tid));
  s.bind(3, std::string_view(open.start_end ? "start" : "push"));
  if (open.name.domain.empty()) s.bind_null(4);
  else s.bind(4, open.name.domain);
  s.bind(5, open.name.name).bind(6, static_cast<int64_t>(open.begin_ns)).bind(7, end_ns).run();
  ++counts_.nvtx_ranges;
  row();
}

void Exporter::gpu_activity(const SectionModel& section, const GpuActivityRecord& gpu) {
  const uint64_t s = section.section_id;
  rows_.gpu.bind(1, process_id(s)).bind(2, static_cast<int64_t>(gpu.correlation_id)).bind(3, int64_t{gpu.device});
  rows_.gpu.bind(4, device_id(s, gpu.device)).bind_bits(5, gpu.stream).bind(6, gpu_activity_kind_name(gpu.kind));
  rows_.gpu.bind(7, gpu_timing_source_name(gpu.source)).bind(8, static_cast<int64_t>(gpu.start_ns));
  rows_.gpu.bind(9, static_cast<int64_t>(gpu.end_ns)).bind(10, nonzero(gpu.graph_node)).run();
  ++counts_.gpu_activities;
}

// Written at instantiation; a graph launch timed node by node names its
// nodes in gpu_activities.graph_node.
void Exporter::graph_node(const SectionModel& section, const GraphNodeRecord& n) {
  const bool kernel = n.type == static_cast<uint8_t>(GraphNodeType::kKernel);
  Statement& st = rows_.graph_node;
  st.bind(1, process_id(section.section_id)).bind_bits(2, n.graph_exec).bind_bits(3, n.graph).bind_bits(4, n.node);
  st.bind(5, graph_node_type_name(n.type));
  const bool host = n.type == static_cast<uint8_t>(GraphNodeType::kHost) && n.function != 0;
  st.bind(6, kernel ? function_id(section, n.function, UINT64_MAX)
             : host ? std::optional<int64_t>(host_function_id(section, n.function, UINT64_MAX, false))
                    : std::nullopt);
  const std::optional<int64_t> none;
  st.bind(7, kernel ? std::optional<int64_t>(n.grid.x) : none).bind(8, kernel ? std::optional<int64_t>(n.grid.y) : none);
  st.bind(9, kernel ? std::optional<int64_t>(n.grid.z) : none).bind(10, kernel ? std::optional<int64_t>(n.block.x) : none);
  st.bind(11, kernel ? std::optional<int64_t>(n.block.y) : none).bind(12, kernel ? std::optional<int64_t>(n.block.z) : none);
  st.bind(13, kernel ? std::optional<int64_t>(n.dynamic_shared_bytes) : none);
  st.bind(14, n.bytes != 0 ? std::optional<int64_t>(static_cast<int64_t>(n.bytes)) : none).run();
  ++counts_.graph_nodes;
}

// A kernel launch, copy or memset: its row beside its call's.
void Exporter::operation(const interpret::Operation& op) {
  const SectionModel& section = *op.section->model;
  const uint64_t s = section.section_id;
  const int64_t process = process_id(s);
  const auto correlation = static_cast<int64_t>(op.span().correlation_id);
  switch (op.kind) {
    case interpret::OperationKind::kKernel: {
      const KernelLaunchRecord& k = op.launch;
      const bool host_function = (k.launch_flags & kLaunchHostFunction) != 0;
      Statement& st = rows_.kernel;
      st.bind(1, call_id_).bind(2, process).bind(3, correlation).bind(4, int64_t{k.device}).bind(5, device_id(s, k.device));
      st.bind_bits(6, k.stream)
          .bind(7, host_function ? std::optional<int64_t>(host_function_id(section, k.function, k.span.begin_ns, true))
                                 : function_id(section, k.function, k.span.begin_ns));
      st.bind(8, int64_t{k.grid.x}).bind(9, int64_t{k.grid.y}).bind(10, int64_t{k.grid.z});
      st.bind(11, int64_t{k.block.x}).bind(12, int64_t{k.block.y}).bind(13, int64_t{k.block.z});
      st.bind(14, int64_t{k.dynamic_shared_bytes}).bind(15, int64_t{k.launch_flags}).bind(16, int64_t{host_function});
      st.run();
      ++counts_.kernels;
      break;
    }
    case interpret::OperationKind::kCopy: {
      const MemoryCopyRecord& c = op.copy;
      // Files of the first version have no src/dst device (they read as 0: unknown).
      const bool has_ends = op.record_bytes >= sizeof(MemoryCopyRecord);
      Statement& st = rows_.copy;
      st.bind(1, call_id_).bind(2, process).bind(3, correlation).bind(4, int64_t{c.device}).bind(5, device_id(s, c.device));
      st.bind_bits(6, c.stream).bind(7, static_cast<int64_t>(c.bytes)).bind(8, copy_direction_name(c.direction));
      st.bind(9, memory_kind_name(c.src_kind)).bind(10, memory_kind_name(c.dst_kind));
      st.bind(11, has_ends ? unless_negative(c.src_device) : std::nullopt);
      st.bind(12, has_ends ? unless_negative(c.dst_device) : std::nullopt).bind(13, unless_negative(c.peer_device));
      st.bind_bits(14, c.src).bind_bits(15, c.dst).run();
      ++counts_.copies;
      break;
    }
    case interpret::OperationKind::kMemset: {
      const MemorySetRecord& m = op.set;
      Statement& st = rows_.memset;
      st.bind(1, call_id_).bind(2, process).bind(3, correlation).bind(4, int64_t{m.device}).bind(5, device_id(s, m.device));
      st.bind_bits(6, m.stream).bind(7, static_cast<int64_t>(m.bytes)).bind(8, int64_t{m.value});
      st.bind(9, int64_t{m.element_bytes}).bind(10, memory_kind_name(m.dst_kind)).bind_bits(11, m.dst).run();
      ++counts_.memsets;
      break;
    }
    case interpret::OperationKind::kGraphLaunch: break;  // api_calls only
  }
}

void Exporter::memory_operation(const SectionModel& section, const MemoryOperationRecord& m) {
  const uint64_t s = section.section_id;
  Statement& st = rows_.memory;
  st.bind(1, call_id_).bind(2, process_id(s)).bind(3, static_cast<int64_t>(m.span.correlation_id));
  st.bind(4, int64_t{m.device}).bind(5, device_id(s, m.device));
  st.bind(6, allocation_kind_name(m.kind)).bind(7, memory_action_name(m.action)).bind_bits(8, m.address);
  st.bind(9, static_cast<int64_t>(m.bytes)).bind_bits(10, m.stream).bind_bits(11, m.handle);
  st.bind(12, m.kind == static_cast<uint8_t>(AllocationKind::kPool) && m.pool_reserved_bytes != kPoolReservedUnknown
                  ? std::optional<int64_t>(static_cast<int64_t>(m.pool_reserved_bytes))
                  : std::nullopt);
  st.bind(13, static_cast<int64_t>(m.pitch_or_offset_bytes)).bind(14, int64_t{m.flags}).run();
  ++counts_.memory_operations;
}

void Exporter::communicator(const SectionModel& section, const CollectiveCommRecord& c) {
  Statement& st = rows_.communicator;
  st.bind(1, call_id_).bind(2, process_id(section.section_id)).bind(3, unless_negative(c.device)).bind_bits(4, c.comm);
  st.bind_bits(5, c.comm_id);
  st.bind(6, c.parent_comm_id != 0 ? std::optional<int64_t>(static_cast<int64_t>(c.parent_comm_id)) : std::nullopt);
  st.bind(7, int64_t{c.rank}).bind(8, int64_t{c.nranks}).bind(9, comm_action_name(c.action));
  st.bind(10, collective_library_name(c.library)).run();
}

void Exporter::collective(const SectionModel& section, const CollectiveRecord& c) {
  Statement& st = rows_.collective;
  st.bind(1, call_id_).bind(2, process_id(section.section_id)).bind(3, static_cast<int64_t>(c.span.correlation_id));
  st.bind(4, unless_negative(c.device)).bind_bits(5, c.comm);
  st.bind_bits(6, c.comm_id).bind(7, static_cast<int64_t>(c.sequence)).bind(8, collective_op_name(c.op));
  st.bind(9, static_cast<int64_t>(c.count)).bind(10, static_cast<int64_t>(c.bytes)).bind(11, int64_t{c.datatype});
  st.bind(12, c.reduction == 255 ? std::nullopt : std::optional<int64_t>(c.reduction));
  st.bind(13, unless_negative(c.root)).bind(14, int64_t{c.rank}).bind(15, int64_t{c.nranks});
  st.bind_bits(16, c.stream).bind(17, nonzero(c.group_id)).run();
  ++counts_.collectives;
}

void Exporter::collective_group(const SectionModel& section, const CollectiveGroupRecord& g) {
  Statement& st = rows_.group;
  st.bind(1, call_id_).bind(2, process_id(section.section_id)).bind(3, static_cast<int64_t>(g.span.correlation_id));
  st.bind(4, unless_negative(g.device));
  st.bind_bits(5, g.group_id).bind(6, nonzero(g.stream)).bind(7, int64_t{g.members}).run();
}

void Exporter::nvtx(const interpret::NvtxEvent& e) {
  ranges_.on_event(e, [&](const auto& open, uint64_t end_ns, uint64_t section_id) {
    close_range(open, static_cast<int64_t>(end_ns), section_id);
  });
  // A start/end range closes as soon as both ends are read, as `stats nvtx` counts it.
  ranges_.settle_started(UINT64_MAX, [&](const auto& open, uint64_t end_ns, uint64_t section_id) {
    close_range(open, static_cast<int64_t>(end_ns), section_id);
  });
}

void Exporter::finish() {
  // Ranges never closed (the process exited or crashed inside them): end_ns NULL.
  ranges_.for_each_open([&](const auto& open, uint64_t section_id) { close_range(open, std::nullopt, section_id); });
  db_.exec("COMMIT");
}

}  // namespace

ExportCounts export_sqlite(std::vector<InputTrace>& inputs, const TraceModel& model, const std::string& path) {
  Database db(path);
  db.exec(kCreateTables);
  ExportCounts counts;
  {
    Exporter exporter(db, model);
    exporter.write_definitions(inputs);
    interpret::InterpretOptions options;
    options.only_defined_sections = true;
    options.calls_in_file_order = true;
    options.join_gpu_work = false;  // the views join calls and GPU work
    const interpret::InterpretResult interpreted = interpret::Interpreter(model, {&exporter}, options).run(inputs);
    exporter.check();
    exporter.finish();
    counts = exporter.counts();
    counts.records_skipped = interpreted.records_without_definitions;
    counts.unpaired_stacks = interpreted.unpaired_stacks;
  }  // statements are finalized before the indexes and the close
  db.exec(kCreateIndexesAndViews);
  db.close();
  return counts;
}

}  // namespace proflaunch::tools::sql
