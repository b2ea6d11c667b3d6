// proftrace: reads proflaunch traces. See `proftrace --help`.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "formats/records.h"
#include "tools/proftrace/commands.h"

int main(int argc, char** argv) {
  using namespace proflaunch::tools;
  CLI::App app{"proftrace: convert and inspect proflaunch GPU traces"};
  app.set_version_flag("--version", std::string("proftrace ") + PROFLAUNCH_VERSION +
                                        " (trace format version " +
                                        std::to_string(proflaunch::format::kFormatVersion) + ")");
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_convert_command(app, exit_code);
  add_info_command(app, exit_code);
  add_dump_command(app, exit_code);
  add_memory_command(app, exit_code);
  add_stats_command(app, exit_code);
  add_report_command(app, exit_code);
  add_export_command(app, exit_code);
  add_view_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return exit_code;
}
