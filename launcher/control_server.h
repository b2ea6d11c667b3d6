// The job's end of capture on demand: a thread in the launcher serves
// `proflaunch ctl` on <control dir>/<launcher pid>.sock and passes commands
// to the traced processes through <parts dir>/control (the shim's side:
// preload/control/control_page.h).
//
// Requests, one line per connection, answered with lines and a last line
// "end" or "error <why>" ("unknown <pid>" when the pid is not in this job):
//   list
//   start <pid> <duration ns> <force 0|1> <output or ->
//   stop  <pid> 0 <force> <output or ->
//   dump  <pid> 0 <force> <output or ->
// <pid> is a traced process, or the launcher's pid for every process of the
// job. Only the user who started the job is served: the directory is theirs
// alone, and each peer's credentials (SO_PEERCRED) are checked as well.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>
#include <cstdint>

namespace proflaunch::control {
struct Page;
}

namespace proflaunch::launcher {

struct JobInfo {
  std::string output;   // the trace the run will write
  std::string command;  // the program and its arguments
  std::string mode;     // "whole run", "idle", "ring 30s", ...
  bool idle = false;    // ctl start/stop work (proflaunch --idle)
  bool ring = false;    // ctl dump writes the flight recorder out
};

class ControlServer {
 public:
  ControlServer() = default;
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Creates the control page in `parts_dir` (before the program starts, so
  // that every process maps it). False with a message when it cannot: the
  // run goes on without `ctl`.
  bool create_page(const std::string& parts_dir, std::string* error);
  // Listens and serves until stop(). False with a message when it cannot.
  bool start(const JobInfo& job, std::string* error);
  // Stops serving; removes the socket and the control page.
  void stop();

  // The pids that took a slot in the control page (any state, alive or
  // not): with the parts' names, who may still be writing. Empty without a page.
  std::vector<uint32_t> slot_pids() const;

  // One request, as the thread serves it (tests call it directly).
  std::string handle(const std::string& request);

 private:
  void serve();
  std::string list();
  std::string command(const std::string& verb, uint32_t pid, uint64_t duration_ns, bool force,
                      const std::string& output);
  std::string write_outputs(const std::vector<uint32_t>& pids, const std::string& output, bool force);

  std::string parts_dir_;
  std::string page_path_;
  std::string socket_path_;
  control::Page* page_ = nullptr;
  JobInfo job_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace proflaunch::launcher
