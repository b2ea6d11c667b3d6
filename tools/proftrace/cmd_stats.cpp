// proftrace stats FILE...: summary tables (GPU kernels, API calls, and what
// other sections register in stats/stats_sections.cpp).
#include <CLI/CLI.hpp>

#include <set>

#include <algorithm>

#include "tools/proftrace/capture_windows.h"
#include "tools/proftrace/commands.h"
#include "tools/proftrace/stats/stats_section.h"
#include "tools/proftrace/stats/table_output.h"
#include "tools/proftrace/trace_model.h"

namespace proflaunch::tools {

using namespace proflaunch::format;

int run_stats(const StatsCommand& command, std::FILE* out, std::FILE* err) {
  try {
    auto sections = stats::make_stats_sections();
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

    std::vector<InputTrace> inputs;
    std::string error;
    if (!open_inputs(command.inputs, &inputs, &error)) {
      std::fprintf(err, "proftrace: %s\n", error.c_str());
      return kExitError;
    }
    TraceModel model;
    load_definitions(inputs, model);
    // What the trace covers is said even when the capture-windows table is not asked for.
    CaptureWindowCollector windows;
    for (auto& input : inputs) {
      struct Feed : RecordVisitor {
        const TraceModel* model;
        std::vector<std::unique_ptr<stats::StatsSection>>* sections;
        CaptureWindowCollector* windows;
        void on_record(const RecordView& record) override {
          const SectionModel* section = model->find(record.section_id);
          if (section == nullptr) return;
          windows->on_record(*section, record);
          for (auto& s : *sections) s->on_record(*section, record);
        }
      } feed;
      feed.model = &model;
      feed.sections = &sections;
      feed.windows = &windows;
      input.events_report = input.reader->read(feed, ChunkSelection::kEventsOnly);
    }
    const bool damaged = report_recovery(inputs, /*combine_two_passes=*/true, err);
    const bool windows_table = std::any_of(sections.begin(), sections.end(),
                                           [](const auto& s) { return s->name() == "capture-windows"; });
    if (const std::string covered = describe_windows(windows.finish(model)); !covered.empty() && !windows_table)
      std::fprintf(err, "proftrace: note: the trace covers %s\n", covered.c_str());

    std::vector<stats::NamedTable> json_tables;
    for (auto& section : sections) {
      stats::Table table = section->finish(model);
      if (table.rows.empty()) continue;
      if (command.json)
        json_tables.push_back({section->name(), std::move(table)});
      else if (command.csv)
        stats::print_csv(table, out);
      else
        stats::print_text(table, out);
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
               "allocated per call site, NCCL collectives and ranks");
  sub->add_option("files", command->inputs, "proflaunch trace files")->required();
  sub->add_option("--section", command->sections, "only these tables (repeatable): " + names);
  auto* csv = sub->add_flag("--csv", command->csv, "comma-separated values instead of aligned text");
  sub->add_flag("--json", command->json, "one JSON document with every table (columns, rows, notes)")->excludes(csv);
  sub->add_flag("--strict", command->strict, "exit 3 when an input needed recovery");
  sub->callback([command, &exit_code] { exit_code = run_stats(*command, stdout, stderr); });
}

}  // namespace proflaunch::tools
