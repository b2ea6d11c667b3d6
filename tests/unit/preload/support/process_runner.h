// Runs a program for a test: chosen environment changes, optional resource
// limits, stdout and stderr captured separately, exit status kept raw (so a
// test can compare signals and core flags with an untraced run).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace proflaunch::testing {

struct RunOptions {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> set_env;
  std::vector<std::string> unset_env;
  std::optional<rlim_t> file_size_limit_bytes;  // RLIMIT_FSIZE for the child
  int timeout_ms = 30000;                       // then SIGKILL (status says so)
};

struct ProcessResult {
  int status = -1;  // as from waitpid
  std::string out;
  std::string err;
  bool timed_out = false;

  bool exited_with(int code) const;
  bool killed_by(int signal_number) const;
  std::string describe() const;  // for assertion messages
};

ProcessResult run_process(const RunOptions& options);

// A process the test interacts with while it runs.
class RunningProcess {
 public:
  explicit RunningProcess(const RunOptions& options);
  ~RunningProcess();
  RunningProcess(const RunningProcess&) = delete;
  RunningProcess& operator=(const RunningProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Reads stdout until a line equal to `line` arrives; false on timeout/EOF.
  bool wait_for_line(const std::string& line, int timeout_ms);
  void send(int signal_number);
  // Waits for the process and for its output to end. With
  // `until_output_closes` false, returns once the process itself is gone,
  // even if orphaned descendants still hold its stdout/stderr.
  ProcessResult wait(bool until_output_closes = true);

 private:
  void drain(int timeout_ms);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  int timeout_ms_;
  ProcessResult result_;
  size_t scanned_ = 0;
};

// A temporary directory removed (recursively) with the object, or moved
// into $PROFLAUNCH_TEST_KEEP when that names a directory.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Files in `dir` whose names end with `suffix`, sorted.
std::vector<std::string> list_files(const std::string& dir, const std::string& suffix);

// The value of a variable the build passes to tests; fails loudly if missing.
std::string required_env(const char* name);

// An LD_PRELOAD value for `libraries`: in a test build with ASan or TSan, the
// sanitizer runtime this test runs with goes first, as it must in every
// process (the launcher does the same, launcher/preload_list.h).
std::string preload_list(const std::string& libraries);

// That runtime's path in a sanitized test build; "" otherwise.
std::string sanitizer_runtime();

}  // namespace proflaunch::testing
