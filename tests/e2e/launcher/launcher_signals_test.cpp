// Signals through the launcher: SIGTERM/SIGINT sent to the launcher reach the
// program's own handlers; a terminal Ctrl-C, which the terminal already sends
// to the program, is not delivered a second time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/e2e/launcher/launcher_run.h"

namespace proflaunch::testing {
namespace {

void check_forwarded(const std::string& mode, int signal_number) {
  TempDir dir;
  RunningProcess launcher(launcher_options({"-q", "-o", dir / "s.trace"}, probe({mode})));
  ASSERT_TRUE(launcher.wait_for_line("ready", 10000));
  launcher.send(signal_number);  // to the launcher only, as kill(1) or a batch system would
  const ProcessResult result = launcher.wait();
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "ready\nhandled signal " + std::to_string(signal_number) + "\n");
  // The program finished normally, so its trace is complete.
  const TraceContents trace = load_file(dir / "s.trace");
  ASSERT_EQ(trace.sections.size(), 1u);
  EXPECT_TRUE(trace.sections.begin()->second.end.has_value());
}

TEST(LauncherSignals, SigtermToTheLauncherReachesTheProgramsHandler) {
  check_forwarded("sigterm", SIGTERM);
}

TEST(LauncherSignals, SigintFromAnotherProcessIsForwarded) { check_forwarded("sigint", SIGINT); }

TEST(LauncherSignals, AKilledProgramStillGetsItsTraceJoined) {
  TempDir dir;
  RunningProcess launcher(launcher_options({"-q", "-o", dir / "k.trace"}, probe({"loop", "20"})));
  ASSERT_TRUE(launcher.wait_for_line("ready", 10000));
  // The loop has no handler: it dies of SIGTERM, and (the shim leaves SIGTERM
  // alone) loses what it recorded in the last flush interval, like SIGKILL.
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  launcher.send(SIGTERM);
  const ProcessResult result = launcher.wait();
  EXPECT_TRUE(result.exited_with(128 + SIGTERM)) << result.describe();
  EXPECT_GE(load_file(dir / "k.trace").total_calls(), 20u);
  EXPECT_FALSE(file_exists(dir / "k.trace.parts"));
}

// Runs the launcher as the session leader of a new pseudo-terminal, whose
// foreground process group it leads. The program moves to a group of its own,
// so ^C typed on the terminal reaches only the launcher: the program sees it
// only if the launcher forwards terminal signals, which it must not (in a
// normal session the terminal delivers them to the program itself).
int count_sigints_after_terminal_ctrl_c(bool send_ctrl_c, std::string* out) {
  TempDir dir;
  int master = -1;
  int out_pipe[2];
  if (pipe(out_pipe) != 0) return -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    close(out_pipe[0]);
    close(out_pipe[1]);
    setenv("PROFLAUNCH_LIBRARY", probe_shim_path().c_str(), 1);
    unsetenv("LD_PRELOAD");
    const std::string output = dir / "t.trace";
    const std::string app = probe_app_path();
    const std::string launcher = launcher_path();
    execl(launcher.c_str(), launcher.c_str(), "-q", "-o", output.c_str(), "--", app.c_str(),
          "count-sigint", "own-group", static_cast<char*>(nullptr));
    _exit(126);
  }
  close(out_pipe[1]);
  fcntl(master, F_SETFL, O_NONBLOCK);
  bool sent = false;
  char buffer[256];
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {master, POLLIN, 0}};
    poll(fds, 2, 50);
    if (fds[1].revents & POLLIN) {
      while (read(master, buffer, sizeof buffer) > 0) {  // keep the terminal drained
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      const ssize_t n = read(out_pipe[0], buffer, sizeof buffer);
      if (n <= 0) break;
      out->append(buffer, static_cast<size_t>(n));
    }
    if (!sent && out->find("ready\n") != std::string::npos) {
      sent = true;
      if (send_ctrl_c && write(master, "\x03", 1) != 1) break;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  close(out_pipe[0]);
  return status;
}

TEST(LauncherSignals, ATerminalCtrlCIsNotForwardedASecondTime) {
  std::string out;
  const int status = count_sigints_after_terminal_ctrl_c(true, &out);
  EXPECT_EQ(out, "ready\nsigint count 0\n");
  // The launcher itself survived the ^C and waited for the program.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace proflaunch::testing
