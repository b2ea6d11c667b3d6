// proftrace report FILE... [-o report.html]: the analyses of `stats` and the
// memory page in one self-contained HTML page (report/report_page.h).
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>

#include "tools/proftrace/interpret/capture_windows.h"
#include "tools/proftrace/commands.h"
#include "tools/proftrace/memory/memory_analysis.h"
#include "tools/proftrace/memory/report_writers.h"
#include "tools/proftrace/report/report_page.h"
#include "tools/proftrace/stats/cpu_page_data.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

namespace {

// The code view's other aggregations (the stats section is by line); the
// page switches between them.
constexpr const char* kCodeAggregations[] = {"function", "file", "module"};
// The utilization chart's resolution.
constexpr size_t kActivityBins = 240;

// Writes `content` to `path` through PATH.partial, renamed when complete, so
// that a failed or killed run leaves no half page; "-" is stdout.
bool write_output(const std::string& path, const std::string& what, std::FILE* err,
                  const std::function<bool(std::FILE*)>& write) {
  if (path == "-") return write(stdout) && std::fflush(stdout) == 0;
  const std::string partial = path + ".partial";
  std::FILE* out = std::fopen(partial.c_str(), "wb");
  if (out == nullptr) {
    std::fprintf(err, "proftrace report: %s: cannot create the %s: %s\n", partial.c_str(), what.c_str(),
                 std::strerror(errno));
    return false;
  }
  const bool written = write(out);
  const int saved = errno;
  const bool closed = std::fclose(out) == 0;
  if (!written || !closed || std::rename(partial.c_str(), path.c_str()) != 0) {
    std::fprintf(err, "proftrace report: %s: writing the %s failed: %s\n", path.c_str(), what.c_str(),
                 std::strerror(written ? errno : saved));
    std::remove(partial.c_str());
    return false;
  }
  return true;
}

}  // namespace

std::string default_report_output(const std::string& input) {
  std::string stem = input;
  for (std::string_view ending : {".trace", ".part"}) {
    if (std::string_view(stem).ends_with(ending)) {
      stem.resize(stem.size() - ending.size());
      break;
    }
  }
  return stem + "-report.html";
}

int run_report(const ReportCommand& command, std::FILE* err) {
  try {
    stats::StatsOptions options;
    options.top = command.top;
    options.timeline_bins = kActivityBins;
    if (!command.step_range.empty()) {
      if (!is_step_range(command.step_range)) {
        std::fprintf(err, "proftrace report: --step-range '%s' is not an NVTX range NAME[@DOMAIN]\n",
                     command.step_range.c_str());
        return kExitError;
      }
      options.step_range = command.step_range;
    }
    const std::string output = command.output.empty() ? default_report_output(command.inputs.front()) : command.output;

    Trace trace;
    if (!load_trace(command.inputs, InputCheck::kComplete, &trace, err)) return kExitError;
    std::vector<InputTrace>& inputs = trace.inputs;
    const TraceModel& model = trace.model;

    // One pass for every stats section (the code view once per aggregation).
    auto sections = stats::make_stats_sections(options);
    std::vector<std::string> names;
    for (const auto& section : sections) names.push_back(section->name());
    for (const char* by : kCodeAggregations) {
      stats::StatsOptions code = options;
      code.by = by;
      for (auto& section : stats::make_stats_sections(code)) {
        if (section->name() != "code") continue;
        sections.push_back(std::move(section));
        names.push_back(std::string("code-") + by);
      }
    }
    // The CPU tab's samples and waits, in the same pass.
    auto cpu_page = std::make_unique<stats::CpuPageData>();
    stats::CpuPageData* cpu = cpu_page.get();
    sections.push_back(std::move(cpu_page));
    names.push_back("cpu-page");
    const interpret::InterpretResult interpreted = stats::feed_sections(inputs, model, sections);
    report::ReportData data;
    data.cpu_json = cpu->json(model);
    data.inputs = command.inputs;
    for (const auto& input : command.inputs) data.title += (data.title.empty() ? "" : ", ") + input;
    for (size_t i = 0; i < sections.size(); ++i)
      for (stats::Table& table : sections[i]->finish_tables(model))
        if (!table.rows.empty()) data.tables.push_back({names[i], std::move(table)});
    if (const std::string covered = describe_windows(interpreted.windows); !covered.empty())
      data.notes.push_back("the trace covers " + covered);

    // The memory page's analysis (its own passes).
    memory::MemoryReport memory_report = memory::analyze_memory(inputs, model, memory::AnalysisOptions{});
    memory::attach_call_stacks(model, memory_report);
    if (!memory::report_as_json(memory_report, data.title, &data.memory_json)) {
      std::fprintf(err, "proftrace report: the memory analysis could not be written\n");
      return kExitError;
    }

    const bool damaged = report_recovery(inputs, /*combine_two_passes=*/true, err);
    if (damaged)
      data.notes.push_back("an input was damaged and recovered (proftrace info says how much): what was lost is "
                           "missing from every table");

    bool ok = write_output(output, "page", err, [&](std::FILE* f) { return report::write_report_page(data, f); });
    if (!command.json.empty())
      ok = write_output(command.json, "JSON", err, [&](std::FILE* f) {
             const std::string json = report::report_json(data);
             return std::fwrite(json.data(), 1, json.size(), f) == json.size();
           }) && ok;
    if (!ok) return kExitError;
    if (!command.quiet && output != "-") std::fprintf(err, "proftrace: wrote %s\n", output.c_str());
    return damaged && command.strict ? kExitDamagedInput : kExitOk;
  } catch (const std::exception& e) {
    std::fprintf(err, "proftrace report: %s\n", e.what());
    return kExitError;
  }
}

void add_report_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<ReportCommand>();
  CLI::App* sub = app.add_subcommand(
      "report", "One self-contained HTML page: overview (GPU utilization, step breakdown), recommendations, "
                "kernels, memory operations, code, device memory and, with one trace per rank, the distributed "
                "view. Opens offline in any browser.");
  sub->add_option("files", command->inputs, "proflaunch trace files (several: one per rank or process)")
      ->required();
  sub->add_option("-o,--output", command->output, "the HTML page (default: next to the first input, NAME-report.html)");
  sub->add_option("--json", command->json, "also write the page's data as one JSON document (- for stdout)");
  sub->add_option("--top", command->top, "rows of each code table (by line, function, file, module)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  sub->add_option("--step-range", command->step_range,
                  "the NVTX range that is one step, NAME[@DOMAIN] as proflaunch --step-range "
                  "(default: found from the trace)");
  sub->add_flag("--strict", command->strict, "exit 3 when an input needed recovery");
  sub->add_flag("-q,--quiet", command->quiet, "do not say where the page was written");
  sub->callback([command, &exit_code] { exit_code = run_report(*command, stderr); });
}

}  // namespace proflaunch::tools
