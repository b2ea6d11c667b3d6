// proftrace memory FILE... [-o memory.html] [--json F] [--csv DIR] [--report]
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "tools/proftrace/commands.h"
#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/memory/report_writers.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

namespace {

std::string title_of(const std::vector<std::string>& inputs) {
  std::string title;
  for (const std::string& input : inputs) title += (title.empty() ? "" : ", ") + input;
  return title;
}

// Writes one output file with `write`; removes it when writing failed.
template <typename Write>
bool write_file(const std::string& path, std::FILE* err, Write&& write) {
  std::FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(err, "proftrace: %s: cannot create the output: %s\n", path.c_str(), std::strerror(errno));
    return false;
  }
  const bool written = write(out);
  const bool closed = path == "-" ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    std::fprintf(err, "proftrace: %s: writing failed: %s\n", path.c_str(), std::strerror(errno));
    if (path != "-") std::remove(path.c_str());
    return false;
  }
  return true;
}

}  // namespace

int run_memory(const MemoryCommand& command, std::FILE* out, std::FILE* err) {
  try {
    Trace trace;
    if (!load_trace(command.inputs, InputCheck::kComplete, &trace, err)) return kExitError;
    std::vector<InputTrace>& inputs = trace.inputs;
    const TraceModel& model = trace.model;
    std::string error;
    memory::AnalysisOptions options;
    options.timeline_buckets = command.timeline_points / 2;
    options.order.horizon_ns = command.reorder_window_ms * 1'000'000;
    memory::MemoryReport report = memory::analyze_memory(inputs, model, options);
    memory::attach_call_stacks(model, report);
    const bool damaged = report_recovery(inputs, true, err);
    const std::string title = title_of(command.inputs);

    bool ok = true;
    if (!command.html.empty())
      ok = write_file(command.html, err, [&](std::FILE* f) { return memory::write_html_report(report, title, f); }) && ok;
    if (!command.json.empty())
      ok = write_file(command.json, err, [&](std::FILE* f) { return memory::write_json_report(report, title, f); }) && ok;
    if (!command.csv_directory.empty() && !memory::write_csv_report(report, command.csv_directory, &error)) {
      std::fprintf(err, "proftrace: %s\n", error.c_str());
      ok = false;
    }
    const bool any_file = !command.html.empty() || !command.json.empty() || !command.csv_directory.empty();
    if (command.report || !any_file) {
      memory::TextOptions text;
      text.top = command.top;
      memory::write_text_report(report, title, text, out);
    }
    if (!ok) return kExitError;
    return damaged && command.strict ? kExitDamagedInput : kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace: memory failed: %s\n", e.what());
    return kExitError;
  }
}

void add_memory_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<MemoryCommand>();
  CLI::App* sub = app.add_subcommand(
      "memory", "Device memory over time: peaks, what was live at the peak, failed allocations, leaks. "
                "Without an output option, prints a report.");
  sub->add_option("files", command->inputs, "proflaunch trace files (.trace or .part)")->required();
  sub->add_option("-o,--output", command->html, "self-contained HTML page with the timelines");
  sub->add_option("--json", command->json, "the report as JSON (- for stdout)");
  sub->add_option("--csv", command->csv_directory,
                  "directory for CSV tables: spaces, timeline, live_at_peak, failures, leaks");
  sub->add_flag("--report", command->report, "also print the report when writing files");
  sub->add_option("--top", command->top, "blocks listed per table in the report")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  sub->add_option("--timeline-points", command->timeline_points,
                  "at most about this many points per timeline (longer traces are downsampled, peaks kept)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{2}, size_t{10'000'000}));
  sub->add_option("--reorder-window-ms", command->reorder_window_ms,
                  "how far out of time order events from different threads may arrive")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{3'600'000}));
  sub->add_flag("--strict", command->strict,
                "exit with status 3 if an input was damaged (truncated or corrupt) and had to be recovered");
  sub->callback([command, &exit_code] { exit_code = run_memory(*command, stdout, stderr); });
}

}  // namespace proflaunch::tools
