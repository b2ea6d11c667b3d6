#include "tests/unit/preload/support/process_runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace proflaunch::testing {
namespace {

pid_t spawn(const RunOptions& options, int* out_fd, int* err_fd) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    // No core files from the crash tests; identical for traced and untraced runs.
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    if (options.file_size_limit_bytes) {
      rlimit limit{*options.file_size_limit_bytes, *options.file_size_limit_bytes};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    for (const auto& name : options.unset_env) unsetenv(name.c_str());
    for (const auto& [name, value] : options.set_env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  *out_fd = out_pipe[0];
  *err_fd = err_pipe[0];
  return pid;
}

// Reads what is available on both pipes until `deadline` or until both close.
// Returns true when both are closed.
bool pump(int& out_fd, int& err_fd, std::string& out, std::string& err,
          std::chrono::steady_clock::time_point deadline, bool stop_on_stdout_data) {
  while (out_fd >= 0 || err_fd >= 0) {
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    bool got_stdout = false;
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? out_fd : err_fd;
      if (fd < 0 || fds[i].revents == 0) continue;
      char buffer[65536];
      const ssize_t n = read(fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fd);
        fd = -1;
        continue;
      }
      (i == 0 ? out : err).append(buffer, static_cast<size_t>(n));
      got_stdout |= i == 0;
    }
    if (stop_on_stdout_data && got_stdout) return false;
  }
  return true;
}

}  // namespace

bool ProcessResult::exited_with(int code) const {
  return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

bool ProcessResult::killed_by(int signal_number) const {
  return WIFSIGNALED(status) && WTERMSIG(status) == signal_number;
}

std::string ProcessResult::describe() const {
  std::string text;
  if (timed_out) text += "TIMED OUT; ";
  if (WIFEXITED(status))
    text += "exit " + std::to_string(WEXITSTATUS(status));
  else if (WIFSIGNALED(status))
    text += "signal " + std::to_string(WTERMSIG(status));
  else
    text += "status " + std::to_string(status);
  text += "\n--- stdout ---\n" + out.substr(0, 4000) + "\n--- stderr ---\n" + err.substr(0, 4000);
  return text;
}

ProcessResult run_process(const RunOptions& options) {
  RunningProcess process(options);
  return process.wait();
}

RunningProcess::RunningProcess(const RunOptions& options) : timeout_ms_(options.timeout_ms) {
  pid_ = spawn(options, &out_fd_, &err_fd_);
}

RunningProcess::~RunningProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

bool RunningProcess::wait_for_line(const std::string& line, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    size_t start = scanned_;
    size_t end;
    while ((end = result_.out.find('\n', start)) != std::string::npos) {
      if (result_.out.compare(start, end - start, line) == 0) {
        scanned_ = end + 1;
        return true;
      }
      start = end + 1;
    }
    scanned_ = start;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (pump(out_fd_, err_fd_, result_.out, result_.err, deadline, true)) return false;  // EOF
  }
}

void RunningProcess::send(int signal_number) { kill(pid_, signal_number); }

ProcessResult RunningProcess::wait(bool until_output_closes) {
  if (!until_output_closes) {
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pump(out_fd_, err_fd_, result_.out, result_.err,
         std::chrono::steady_clock::now() + std::chrono::milliseconds(50), false);
    result_.status = status;
    pid_ = -1;
    return result_;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_);
  if (!pump(out_fd_, err_fd_, result_.out, result_.err, deadline, false)) {
    result_.timed_out = true;
    kill(pid_, SIGKILL);
    pump(out_fd_, err_fd_, result_.out, result_.err,
         std::chrono::steady_clock::now() + std::chrono::seconds(2), false);
  }
  // Descendants may keep the pipes open after the process itself exited.
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  result_.status = status;
  pid_ = -1;
  return result_;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/proflaunch-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  // PROFLAUNCH_TEST_KEEP=DIR keeps every test's files (traces and outputs)
  // in DIR instead of removing them: scripts/compare-proftrace.py converts
  // them with two builds of proftrace and compares the outputs.
  if (const char* keep = std::getenv("PROFLAUNCH_TEST_KEEP"); keep != nullptr && *keep != '\0') {
    const std::string name = path_.substr(path_.rfind('/') + 1);
    if (rename(path_.c_str(), (std::string(keep) + "/" + name).c_str()) == 0) return;
  }
  nftw(path_.c_str(),
       [](const char* path, const struct stat*, int, FTW*) { return remove(path); }, 16,
       FTW_DEPTH | FTW_PHYS);
}

std::vector<std::string> list_files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> files;
  DIR* handle = opendir(dir.c_str());
  if (handle == nullptr) return files;
  while (dirent* entry = readdir(handle)) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      files.push_back(dir + "/" + name);
  }
  closedir(handle);
  std::sort(files.begin(), files.end());
  return files;
}

std::string required_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0')
    throw std::runtime_error(std::string("test environment variable not set: ") + name);
  return value;
}

std::string sanitizer_runtime() {
  std::string runtime;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::string base = name.substr(name.rfind('/') + 1);
        if (base.rfind("libasan.so", 0) != 0 && base.rfind("libtsan.so", 0) != 0) return 0;
        *static_cast<std::string*>(data) = name;
        return 1;
      },
      &runtime);
  return runtime;
}

std::string preload_list(const std::string& libraries) {
  const std::string runtime = sanitizer_runtime();
  return runtime.empty() ? libraries : runtime + ":" + libraries;
}

}  // namespace proflaunch::testing
