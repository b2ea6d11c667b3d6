// What proftrace knows about a trace after the definitions pass: per section
// (process image) its process info, strings, API names, functions, threads,
// devices and whether it ended cleanly. Memory grows with the number of
// definitions (kernels, threads), never with the number of events.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "formats/reader.h"
#include "formats/records.h"
#include "tools/symbols/stack_definitions.h"

namespace proflaunch::tools {

struct SectionModel {
  uint64_t section_id = 0;
  size_t input_index = 0;  // which input file it came from
  std::optional<format::ProcessInfoRecord> process;
  std::unordered_map<uint32_t, std::string> strings;
  std::unordered_map<uint16_t, format::ApiDefRecord> apis;
  // Per handle, definitions sorted by since_ns (handles can be reused).
  std::unordered_map<uint64_t, std::vector<format::FunctionDefRecord>> functions;
  std::map<uint32_t, std::vector<format::ThreadInfoRecord>> threads;  // sorted by since_ns
  std::map<int32_t, format::DeviceInfoRecord> devices;
  std::optional<format::SectionEndRecord> end;
  // NVTX: domain names by handle; names NVTX gave, by (NvtxNameKind, domain, handle).
  std::unordered_map<uint64_t, uint32_t> nvtx_domains;
  std::map<std::tuple<uint8_t, uint64_t, uint64_t>, uint32_t> nvtx_names;
  symbols::SectionStacks stacks;  // call stacks, modules, symbol table (tools/symbols)
  // Device metrics (the launcher's sampler section), by metric id.
  std::map<uint32_t, format::GpuMetricDefRecord> gpu_metrics;

  std::string_view string(uint32_t id) const;  // "" for 0 or unknown ids
  uint32_t pid() const { return process ? process->pid : 0; }
  std::string host() const;          // "" when unknown
  std::string command_line() const;  // arguments joined with spaces
  // Name of API number `api`, or "api#N" when undefined.
  std::string api_name(uint16_t api) const;
  // Mangled name of `handle` as defined at `at_ns`, or "" when undefined.
  std::string_view function_name(uint64_t handle, uint64_t at_ns) const;
  // The FunctionDef of `handle` in force at `at_ns`, or nullptr.
  const format::FunctionDefRecord* function_def(uint64_t handle, uint64_t at_ns) const;
  // The latest name given to `tid` (by nvtxNameOsThread, else the
  // thread's own), or "".
  std::string_view thread_name(uint32_t tid) const;
  // A domain's name ("" for the default domain or an unknown one).
  std::string_view nvtx_domain_name(uint64_t domain) const;
  // The name NVTX gave to (kind, domain, handle), or "".
  std::string_view nvtx_name(format::NvtxNameKind kind, uint64_t domain, uint64_t handle) const;
  // An NvtxEvent's message: its inline text or its registered string.
  std::string nvtx_message(const format::NvtxEventRecord& event, std::string_view inline_text) const;
  bool complete() const { return end.has_value(); }
  // The launcher's device sampler, not a traced process (ProcessFlags).
  bool device_sampler() const {
    return process && (process->flags & format::kProcessDeviceSampler) != 0;
  }
};

class TraceModel {
 public:
  SectionModel& section(uint64_t section_id, size_t input_index);
  const SectionModel* find(uint64_t section_id) const;
  const std::map<uint64_t, SectionModel>& sections() const { return sections_; }
  // Sections in display order: by rank (when set), then start time, then pid.
  std::vector<const SectionModel*> ordered() const;

 private:
  std::map<uint64_t, SectionModel> sections_;
};

// Fills a TraceModel from definition records (the visitor for the
// definitions pass; it ignores event records).
class DefinitionsCollector : public format::RecordVisitor {
 public:
  DefinitionsCollector(TraceModel& model, size_t input_index)
      : model_(model), input_index_(input_index) {}
  void on_record(const format::RecordView& record) override;

 private:
  TraceModel& model_;
  size_t input_index_;
};

// One opened input file and what its passes reported.
struct InputTrace {
  std::string path;
  std::unique_ptr<format::TraceReader> reader;
  format::ReadReport definitions_report;
  format::ReadReport events_report;
};

// Opens every file (checking its header). On the first failure returns false
// with `error` naming that file and the problem.
bool open_inputs(const std::vector<std::string>& paths, std::vector<InputTrace>* inputs,
                 std::string* error);

// The definitions pass over every input.
void load_definitions(std::vector<InputTrace>& inputs, TraceModel& model);

// open_inputs, then load_definitions; false with `error` when a file cannot
// be opened or nothing of it could be read ("<path>: no complete chunk
// could be read (...)").
bool open_readable_inputs(const std::vector<std::string>& paths, std::vector<InputTrace>* inputs,
                          TraceModel& model, std::string* error);

// A command's inputs, opened, with the definitions pass done: what every
// subcommand starts from.
struct Trace {
  std::vector<InputTrace> inputs;
  TraceModel model;
};

// kComplete: a file of which no complete chunk can be read is an error too
// (the outputs that draw or sum the trace); kAny: it is read for what it
// has (dump, info, stats say what was damaged).
enum class InputCheck { kAny, kComplete };

// Opens `paths` and runs the definitions pass into `trace`. On failure says
// which file and why on `err` ("proftrace: <file>: <problem>") and returns
// false.
bool load_trace(const std::vector<std::string>& paths, InputCheck check, Trace* trace, std::FILE* err);

}  // namespace proflaunch::tools
