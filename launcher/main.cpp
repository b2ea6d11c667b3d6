// proflaunch: runs a program with libproflaunch.so injected and joins what
// its processes recorded into one trace file.
//
//   proflaunch [options] -- program [args...]
//   proflaunch --join OUT
//
// The options are the rows of the settings table (preload/settings.h):
// launcher/settings_cli.h registers them.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "launcher/ctl.h"
#include "launcher/launch.h"
#include "launcher/settings_cli.h"

namespace {

constexpr const char* kDescription =
    "proflaunch [options] -- program [args...]\n\n"
    "Record what a program does on its GPUs, with no change to the program.\n"
    "Every process it starts is traced; the trace goes to one file.\n\n"
    "Examples:\n"
    "  proflaunch -o run.trace -- python train.py\n"
    "  proflaunch -o 'rank%q{RANK}.trace' -- python train.py   (one file per rank)\n"
    "  proflaunch --join run.trace   (after the launcher was killed)\n";

}  // namespace

int main(int argc, char** argv) {
  using proflaunch::Setting;
  // proflaunch ctl ...: talk to running jobs (launcher/ctl.h).
  if (argc > 1 && std::string(argv[1]) == "ctl") return proflaunch::launcher::ctl_main(argc - 1, argv + 1);
  // proflaunch --help-markdown=options|variables: the READMEs' tables
  // (tests/unit/settings checks them); not in --help.
  if (argc == 2 && std::string(argv[1]).rfind("--help-markdown=", 0) == 0) {
    const std::string table = proflaunch::launcher::settings_markdown(argv[1] + sizeof "--help-markdown=" - 1);
    if (table.empty()) {
      std::fprintf(stderr, "proflaunch: --help-markdown=options or --help-markdown=variables\n");
      return 2;
    }
    std::fputs(table.c_str(), stdout);
    return 0;
  }

  CLI::App app(kDescription, "proflaunch");
  app.set_version_flag("--version", std::string("proflaunch ") + PROFLAUNCH_VERSION);
  app.prefix_command();  // the first non-option starts the program's command line
  proflaunch::launcher::SettingOptions options;
  options.add_to(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  proflaunch::launcher::LaunchOptions launch;
  launch.settings = options.values();
  launch.command = app.remaining();
  if (!launch.command.empty() && launch.command.front() == "--")
    launch.command.erase(launch.command.begin());

  const proflaunch::launcher::SettingValues& settings = launch.settings;
  if (settings.given(Setting::kJoin)) {
    if (!launch.command.empty()) {
      std::fprintf(stderr, "proflaunch: --join takes no program to run\n");
      return 2;
    }
    return proflaunch::launcher::run_join({settings.text(Setting::kJoin), settings.flag(Setting::kForce),
                                           settings.flag(Setting::kQuiet), !settings.flag(Setting::kNoSymbols)});
  }
  // The shim's own parser decides, so that no value is passed on that the
  // shim would replace by its default (the capture options are checked
  // together here).
  const std::string refusal =
      proflaunch::launcher::shim_refusal(proflaunch::launcher::settings_environment(settings));
  if (!refusal.empty()) {
    std::fprintf(stderr, "proflaunch: %s\n", refusal.c_str());
    return 2;
  }
  if (launch.command.empty()) {
    std::fprintf(stderr, "proflaunch: no program given\nusage: proflaunch [options] -- program "
                         "[args...]   (proflaunch --help for the options)\n");
    return 2;
  }
  return proflaunch::launcher::run_traced(launch);
}
