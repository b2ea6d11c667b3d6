#include "launcher/traced_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace proflaunch::launcher {
namespace {

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

std::atomic<pid_t> g_forward_to{0};
std::atomic<bool> g_signalled_after_exit{false};

void forward_signal(int signal_number, siginfo_t* info, void*) {
  const pid_t child = g_forward_to.load();
  if (child <= 0) {
    g_signalled_after_exit.store(true);  // the launcher is joining, or waiting for orphans
    return;
  }
  if (info != nullptr && info->si_code == SI_KERNEL) return;  // the terminal told the program too
  kill(child, signal_number);
}

// SA_RESTART everywhere but around waitpid (see TracedChild::wait).
void install_forwarding(bool restart) {
  for (int signal_number : kForwardedSignals) {
    struct sigaction action {};
    action.sa_sigaction = forward_signal;
    action.sa_flags = SA_SIGINFO | (restart ? SA_RESTART : 0);
    sigemptyset(&action.sa_mask);
    sigaction(signal_number, &action, nullptr);
  }
}

sigset_t forwarded_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal_number : kForwardedSignals) sigaddset(&set, signal_number);
  return set;
}

bool write_all(int fd, const void* data, size_t bytes) {
  const auto* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = write(fd, cursor, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    cursor += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Child side: "name=value\0" entries set, "-name\0" entries removed, until EOF.
// Returns false when the launcher gave up on us (nothing was sent).
bool receive_environment(int fd) {
  std::string message;
  char buffer[4096];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    message.append(buffer, static_cast<size_t>(n));
  }
  if (message.empty()) return false;
  size_t start = 0;
  while (start < message.size()) {
    const size_t end = message.find('\0', start);
    const std::string entry = message.substr(start, end - start);
    start = end == std::string::npos ? message.size() : end + 1;
    if (entry == "go") continue;
    if (!entry.empty() && entry[0] == '-') {
      unsetenv(entry.c_str() + 1);
      continue;
    }
    const size_t equals = entry.find('=');
    if (equals != std::string::npos)
      setenv(entry.substr(0, equals).c_str(), entry.c_str() + equals + 1, 1);
  }
  return true;
}

}  // namespace

TracedChild::~TracedChild() {
  if (release_fd_ >= 0) close(release_fd_);
  if (exec_error_fd_ >= 0) close(exec_error_fd_);
}

bool TracedChild::start(const std::vector<std::string>& command, std::string* error) {
  int release_pipe[2], error_pipe[2];
  if (pipe2(release_pipe, O_CLOEXEC) != 0 || pipe2(error_pipe, O_CLOEXEC) != 0) {
    *error = std::string("cannot create a pipe: ") + std::strerror(errno);
    return false;
  }

  // Handlers first, with the signals blocked until the child's pid is known,
  // so a signal that arrives meanwhile is forwarded, not lost.
  const sigset_t forwarded = forwarded_set();
  sigset_t original_mask;
  sigprocmask(SIG_BLOCK, &forwarded, &original_mask);
  install_forwarding(true);

  const pid_t pid = fork();
  if (pid < 0) {
    *error = std::string("cannot fork: ") + std::strerror(errno);
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    return false;
  }
  if (pid == 0) {
    close(release_pipe[1]);
    close(error_pipe[0]);
    // The program starts with the signal state the launcher was given:
    // dispositions (exec resets our handlers to default) and mask.
    for (int signal_number : kForwardedSignals) signal(signal_number, SIG_DFL);
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    if (!receive_environment(release_pipe[0])) _exit(125);
    std::vector<char*> argv;
    for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int exec_errno = errno;
    write_all(error_pipe[1], &exec_errno, sizeof exec_errno);
    _exit(127);
  }
  close(release_pipe[0]);
  close(error_pipe[1]);
  // A child that dies before reading its environment must not take the
  // launcher down with SIGPIPE. Only here, in the parent: the program
  // inherits the launcher's original disposition.
  signal(SIGPIPE, SIG_IGN);
  release_fd_ = release_pipe[1];
  exec_error_fd_ = error_pipe[0];
  pid_ = pid;
  g_forward_to.store(pid);
  sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  return true;
}

int TracedChild::release(const std::vector<std::pair<std::string, std::string>>& set_env,
                         const std::vector<std::string>& unset_env) {
  std::string message;
  for (const std::string& name : unset_env) message += "-" + name + '\0';
  for (const auto& [name, value] : set_env) message += name + "=" + value + '\0';
  message += std::string("go") + '\0';
  write_all(release_fd_, message.data(), message.size());
  close(release_fd_);
  release_fd_ = -1;

  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(exec_error_fd_, &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(exec_error_fd_);
  exec_error_fd_ = -1;
  return n == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
}

void TracedChild::abandon() {
  if (release_fd_ >= 0) close(release_fd_);  // EOF before "go": the child exits
  release_fd_ = -1;
  wait();
}

int TracedChild::wait() {
  // The wait is interrupted by a forwarded signal rather than restarted: a
  // runtime that runs handlers late, at the end of the interrupted call
  // (ThreadSanitizer does), would otherwise forward nothing until the program
  // had exited. Everything else the launcher does keeps SA_RESTART.
  install_forwarding(false);
  int status = 0;
  bool exited = true;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) {
      exited = false;
      break;
    }
  }
  install_forwarding(true);
  if (exited) g_forward_to.store(0);
  return status;
}

bool TracedChild::signalled_after_exit() { return g_signalled_after_exit.load(); }

int exit_code_for(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace proflaunch::launcher
