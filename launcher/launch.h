// The launcher's two jobs: run a program traced and join its parts, or join
// the parts an interrupted run left behind.
#pragma once

#include <string>
#include <vector>

#include "launcher/settings_cli.h"

namespace proflaunch::launcher {

struct LaunchOptions {
  std::vector<std::string> command;
  SettingValues settings;  // the options (preload/settings.h)
};

// Returns the exit code for the launcher: the program's, 128 + signal when it
// was killed, 127/126 when it could not be run, 1/2 for the launcher's own
// failures before the program started.
int run_traced(const LaunchOptions& options);

struct JoinOptions {
  std::string output;
  bool force = false;
  bool quiet = false;
  bool symbols = true;
};

int run_join(const JoinOptions& options);

}  // namespace proflaunch::launcher
