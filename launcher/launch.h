// The launcher's two jobs: run a program traced and join its parts, or join
// the parts an interrupted run left behind.
#pragma once

#include <string>
#include <vector>

namespace proflaunch::launcher {

struct LaunchOptions {
  std::vector<std::string> command;
  std::string output_pattern = "proflaunch-%p.trace";
  bool force = false;
  std::string gpu_timing = "auto";
  std::string trace_domains = "all";
  std::string stacks;               // empty: the shim's default (PROFLAUNCH_STACKS)
  std::string counted_calls;        // empty: the shim's default (PROFLAUNCH_COUNTED)
  unsigned stack_depth = 0;         // 0: the shim's default
  bool symbols = true;              // append the symbol table after joining
  std::string buffer_size;          // empty: the shim's default
  unsigned flush_interval_ms = 0;   // 0: the shim's default
  bool verbose = false;
  bool quiet = false;
  unsigned wait_after_exit_s = 10;  // for processes the program left running
  // When to record (preload/capture/capture_spec.h): the options' text,
  // passed on verbatim; empty: not given. Checked by main() before the run.
  std::string capture_range;
  std::string capture_range_repeat;
  std::string delay;
  std::string duration;
  std::string steps;
  std::string step_range;
  bool idle = false;
  std::string ring;                 // --ring=DURATION (flight recorder)
  std::string ring_size;
  bool ring_dump_at_exit = false;
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
