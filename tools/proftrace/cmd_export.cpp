// proftrace export --sqlite OUT.sqlite FILE...: the trace as SQL tables.
#include <CLI/CLI.hpp>
#include <sys/stat.h>

#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "tools/proftrace/commands.h"
#include "tools/proftrace/sql/sqlite_export.h"
#include "tools/proftrace/interpret/trace_model.h"

namespace proflaunch::tools {

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

int run_export(const ExportCommand& command, std::FILE* err) {
  if (command.sqlite.empty()) {
    std::fprintf(err, "proftrace export: no output: give --sqlite FILE\n");
    return kExitError;
  }
  // A database is not a file to overwrite by accident: it may hold tables
  // of the user's own, and appending to an old export would double its rows.
  if (exists(command.sqlite) && !command.force) {
    std::fprintf(err, "proftrace: %s: already exists; remove it or pass --force to replace it\n",
                 command.sqlite.c_str());
    return kExitError;
  }
  // Written beside the output and renamed into place once complete, so an
  // interrupted or failed export never leaves a half-written database
  // under the name asked for (and --force replaces the old one only then).
  const std::string partial = command.sqlite + ".partial";
  try {
    Trace trace;
    if (!load_trace(command.inputs, InputCheck::kComplete, &trace, err)) return kExitError;
    std::vector<InputTrace>& inputs = trace.inputs;
    const TraceModel& model = trace.model;
    std::remove(partial.c_str());  // left by an export that was killed
    const sql::ExportCounts counts = sql::export_sqlite(inputs, model, partial);
    if (std::rename(partial.c_str(), command.sqlite.c_str()) != 0) {
      std::fprintf(err, "proftrace: %s: cannot move the finished database into place: %s\n",
                   command.sqlite.c_str(), std::strerror(errno));
      std::remove(partial.c_str());
      return kExitError;
    }
    const bool damaged = report_recovery(inputs, /*combine_two_passes=*/true, err);
    if (counts.records_skipped > 0)
      std::fprintf(err,
                   "proftrace: warning: %" PRIu64
                   " event records belong to processes whose definitions could not be read; they are not exported\n",
                   counts.records_skipped);
    if (!command.quiet)
      std::fprintf(err,
                   "proftrace: wrote %s: %" PRIu64 " processes, %" PRIu64 " threads, %" PRIu64 " API calls (%" PRIu64
                   " kernel launches, %" PRIu64 " copies, %" PRIu64 " memsets, %" PRIu64 " memory operations, %" PRIu64
                   " collectives), %" PRIu64 " GPU activities, %" PRIu64 " NVTX ranges, %" PRIu64 " stacks\n",
                   command.sqlite.c_str(), counts.processes, counts.threads, counts.api_calls, counts.kernels,
                   counts.copies, counts.memsets, counts.memory_operations, counts.collectives, counts.gpu_activities,
                   counts.nvtx_ranges, counts.stacks);
    return damaged && command.strict ? kExitDamagedInput : kExitOk;
  } catch (const std::exception& e) {
    std::remove(partial.c_str());
    std::fprintf(err, "proftrace: %s: export failed: %s\n", command.sqlite.c_str(), e.what());
    return kExitError;
  }
}

void add_export_command(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<ExportCommand>();
  CLI::App* sub = app.add_subcommand(
      "export", "Export traces as SQL tables (processes, threads, devices, API calls, kernels, copies, memsets, "
                "memory operations, GPU activities, NVTX ranges, NCCL collectives, call stacks) to query with "
                "sqlite3, pandas or DuckDB. Several input files go into one database.");
  sub->add_option("files", command->inputs, "proflaunch trace files (.trace or .part)")->required();
  sub->add_option("--sqlite", command->sqlite, "the SQLite database to write (refused if it exists, see --force)")
      ->required();
  sub->add_flag("-f,--force", command->force, "replace the output if it exists");
  sub->add_flag("--strict", command->strict,
                "exit with status 3 if an input was damaged (truncated or corrupt) and had to be recovered");
  sub->add_flag("-q,--quiet", command->quiet, "no summary on stderr (warnings still appear)");
  sub->callback([command, &exit_code] { exit_code = run_export(*command, stderr); });
}

}  // namespace proflaunch::tools
