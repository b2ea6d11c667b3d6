// proflaunch ctl: capture on demand from another terminal. Talks to the
// launchers of the user's running jobs (control_server.h).
//
//   proflaunch ctl list
//   proflaunch ctl start --pid PID [--duration 5s] [-o out.trace]
//   proflaunch ctl stop  --pid PID [-o out.trace]
//   proflaunch ctl dump  --pid PID [-o out.trace]
//
// PID is a traced process, or a launcher's pid for every process of its job
// (one output file per process then: out.rank0.trace, ...).
#pragma once

namespace proflaunch::launcher {

// argv[0] is "ctl". Returns the exit code.
int ctl_main(int argc, char** argv);

}  // namespace proflaunch::launcher
