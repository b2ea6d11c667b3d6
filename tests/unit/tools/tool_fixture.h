// Test helpers for proftrace: write hand-built traces to temporary files,
// run a subcommand in-process, capture its output, parse JSON, and run the
// Perfetto JSON checker (tests/perfetto_json_check.py) on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_builder.h"
#include "tests/unit/tools/json_value.h"
#include "tools/proftrace/commands.h"

namespace proflaunch::testing {

// A file in a per-test temporary directory, removed with it.
std::string temp_path(const std::string& name);
std::string write_trace(format::TraceBuilder& trace, const std::string& name);

struct CommandOutput {
  int exit_code = -1;
  std::string out;
  std::string err;
};

CommandOutput run_info_on(const std::vector<std::string>& files);
CommandOutput run_dump_on(const std::vector<std::string>& files, bool definitions_only = false);
CommandOutput run_stats_on(tools::StatsCommand command);

struct ConvertedTrace {
  int exit_code = -1;
  std::string err;
  std::string json_path;
  std::string json_text;
  JsonValue document;
  std::vector<const JsonValue*> events;

  // Events with this phase (and, when given, whose cat starts with `category`).
  std::vector<const JsonValue*> with_phase(char phase, const std::string& category = "") const;
  // X events on GPU processes (kernels, copies, memsets, graphs, NVTX projections).
  std::vector<const JsonValue*> gpu_slices() const;
  const JsonValue* slice_named(const std::string& name) const;  // first X event with that name
  std::string process_name(uint64_t pid) const;                  // "" if none
  std::string thread_name(uint64_t pid, uint64_t tid) const;
};

// An [x,y,z] launch shape as numbers; empty when `value` is not an array.
std::vector<uint64_t> dim3_of(const JsonValue& value);

ConvertedTrace convert_files(const std::vector<std::string>& files, tools::ConvertCommand command = {});
ConvertedTrace convert_trace(format::TraceBuilder& trace, tools::ConvertCommand command = {});

// Runs the checker on one or more (space-separated) files; returns its exit
// status and puts its output in `output`.
// `gpu_invariants`: also hold the GPU work to tests/perfetto/gpu_invariants.py
// (real traces do; arbitrary records or hand-made overlaps need not).
int run_checker(const std::string& json_paths, std::string* output, bool gpu_invariants = true);

// Runs a shell command; returns the exit status, stdout and stderr.
CommandOutput run_shell(const std::string& command);

}  // namespace proflaunch::testing
