// proftrace stats FILE...: summary tables (GPU kernels, API calls, and what
// other sections register in stats/stats_sections.cpp).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <optional>
#include <set>

#include "preload/capture/capture_spec.h"
#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/commands.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/table_output.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

using namespace proflaunch::format;

bool parse_duration_ns(const std::string& text, uint64_t* ns) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return false;
  }
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  if (scale == 0 || !(value >= 0) || value * scale > 1.8e19) return false;
  *ns = static_cast<uint64_t>(value * scale + 0.5);
  return true;
}

bool is_step_range(const std::string& text) {
  // proflaunch's own parser, so that both spell a step the same way.
  CaptureSpec spec;
  CaptureOptions capture;
  capture.steps = "0:0:1";
  capture.step_range = text.c_str();
  char error[512];
  return parse_capture_options(capture, spec, error, sizeof error) && spec.step_source == StepSource::kNvtx;
}

namespace {

// The options of the call-site sections, checked: an empty optional and a
// message on `err` when one is wrong.
std::optional<stats::StatsOptions> stats_options(const StatsCommand& command, std::FILE* err) {
  stats::StatsOptions options;
  options.top = command.top;
  options.by = command.by;
  options.order = command.order;
  options.full_stacks = command.full_stacks;
  options.timeline_bins = command.timeline_bins;
  options.during = command.during;
  options.step = command.step;
  auto one_of = [&](const std::string& value, const std::vector<std::string>& allowed, const char* option) {
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return true;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    std::fprintf(err, "proftrace stats: %s '%s' is not one of %s\n", option, value.c_str(), list.c_str());
    return false;
  };
  if (!one_of(command.by, stats::code_aggregations(), "--by") ||
      !one_of(command.order, stats::code_order_keys(), "--order"))
    return std::nullopt;
  if (!parse_duration_ns(command.min_time, &options.min_gpu_ns)) {
    std::fprintf(err, "proftrace stats: --min-time '%s' is not a duration (e.g. 250us, 2ms, 1s; ns when bare)\n",
                 command.min_time.c_str());
    return std::nullopt;
  }
  if (!command.step_range.empty()) {
    if (!is_step_range(command.step_range)) {
      std::fprintf(err, "proftrace stats: --step-range '%s' is not an NVTX range NAME[@DOMAIN]\n",
                   command.step_range.c_str());
      return std::nullopt;
    }
    options.step_range = command.step_range;
  }
  if (command.csv && command.json) {
    std::fprintf(err, "proftrace stats: --csv and --json exclude each other\n");
    return std::nullopt;
  }
  return options;
}

}  // namespace

int run_stats(const StatsCommand& command, std::FILE* out, std::FILE* err) {
  try {
    const std::optional<stats::StatsOptions> options = stats_options(command, err);
    if (!options) return kExitError;
    auto sections = stats::make_stats_sections(*options);
    if (!command.sections.empty()) {
      std::set<std::string> wanted(command.sections.begin(), command.sections.end());
      std::set<std::string> known;
      for (const auto& section : sections) known.insert(section->name());
      for (const auto& name : wanted) {
        if (!known.count(name)) {
          std::string list;
          for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
          std::fprintf(err, "proftrace stats: no section named '%s' (sections: %s)\n", name.c_str(),
                       list.c_str());
          return kExitError;
        }
      }
      std::erase_if(sections, [&](const auto& section) { return !wanted.count(section->name()); });
    }

    Trace trace;
    if (!load_trace(command.inputs, InputCheck::kAny, &trace, err)) return kExitError;
    std::vector<InputTrace>& inputs = trace.inputs;
    const TraceModel& model = trace.model;
    // What the trace covers is said even when the capture-windows table is not asked for.
    const interpret::InterpretResult interpreted = stats::feed_sections(inputs, model, sections);
    const bool damaged = report_recovery(inputs, /*combine_two_passes=*/true, err);
    const bool windows_table = std::any_of(sections.begin(), sections.end(),
                                           [](const auto& s) { return s->name() == "capture-windows"; });
    if (const std::string covered = describe_windows(interpreted.windows); !covered.empty() && !windows_table)
      std::fprintf(err, "proftrace: note: the trace covers %s\n", covered.c_str());

    std::vector<stats::NamedTable> json_tables;
    for (auto& section : sections) {
      for (stats::Table& table : section->finish_tables(model)) {
        if (table.rows.empty()) continue;
        if (command.json)
          json_tables.push_back({section->name(), std::move(table)});
        else if (command.csv)
          stats::print_csv(table, out);
        else
          stats::print_text(table, out);
      }
    }
    if (command.json) stats::print_json(json_tables, out);
    return damaged && command.strict ? kExitDamagedInput : kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace stats: %s\n", e.what());
    return kExitError;
  }
}

void add_stats_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<StatsCommand>();
  std::string names;  // in print order
  for (const auto& section : stats::make_stats_sections()) names += (names.empty() ? "" : ", ") + section->name();
  CLI::App* sub = app.add_subcommand(
      "stats", "Summary tables: GPU time per kernel, memory operations, host time per API, GPU time and bytes "
               "allocated per call site and per line, function, file or module of the user's code, NCCL "
               "collectives and ranks");
  sub->add_option("files", command->inputs, "proflaunch trace files")->required();
  sub->add_option("--section", command->sections, "only these tables (repeatable): " + names);
  auto* csv = sub->add_flag("--csv", command->csv, "comma-separated values instead of aligned text");
  sub->add_flag("--json", command->json, "one JSON document with every table instead of aligned text")
      ->excludes(csv);
  sub->add_option("--top", command->top, "call-sites, alloc-sites, code: rows shown")
      ->default_val(20)
      ->check(CLI::PositiveNumber);
  sub->add_option("--by", command->by, "code: sum by line, function, file or module")
      ->default_val("line")
      ->check(CLI::IsMember(stats::code_aggregations()));
  sub->add_option("--order", command->order, "code: sort by gpu, calls, avg, bytes, allocs, stacks or name")
      ->default_val("gpu")
      ->check(CLI::IsMember(stats::code_order_keys()));
  sub->add_option("--min-time", command->min_time, "code: leave out rows with less GPU time (250us, 2ms, 1s; ns when bare)")
      ->default_val("0");
  sub->add_flag("--full-stacks", command->full_stacks,
                "code: print each row's heaviest call stack under it (CSV and JSON always carry it)");
  sub->add_option("--step-range", command->step_range,
                  "overview: the NVTX range that is one step, NAME[@DOMAIN] as proflaunch --step-range "
                  "(default: found from the trace)");
  sub->add_option("--timeline-bins", command->timeline_bins,
                  "overview, gpu-metrics: also the GPU activity and the device metrics over time, the analysed span "
                  "in this many equal bins")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  sub->add_option("--during", command->during,
                  "cpu: only the samples and waits that fall while the thread's GPU had no work (gaps of at "
                  "least 1 ms)")
      ->check(CLI::IsMember({"gpu-idle"}));
  sub->add_option("--step", command->step,
                  "cpu: only step N of the steps found as overview finds them (1 = the first, as "
                  "recommendations name them)")
      ->check(CLI::PositiveNumber);
  sub->add_flag("--strict", command->strict, "exit 3 when an input needed recovery");
  sub->callback([command, &exit_code] { exit_code = run_stats(*command, stdout, stderr); });
}

}  // namespace proflaunch::tools
