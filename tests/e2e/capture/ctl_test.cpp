// Capture on demand end to end: a job under proflaunch (--idle, --ring, or
// the whole run) and `proflaunch ctl` from "another terminal" (this test),
// both pointed at a private control directory (PROFLAUNCH_CONTROL_DIR).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/e2e/capture/capture_support.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

using format::CaptureTrigger;
using format::CaptureWindowAction;

std::vector<std::pair<std::string, std::string>> control_env(const TempDir& dir) {
  return {{"PROFLAUNCH_CONTROL_DIR", dir.path() + "/ctl"}};
}

ProcessResult ctl(const TempDir& dir, const std::vector<std::string>& args) {
  RunOptions options = untraced({build_path("PROFLAUNCH_EXE"), "ctl"}, control_env(dir));
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  return testing::run_process(options);
}

// `ctl list` rows (pid, state) of running processes, polled until `count`
// rows are in `state` (or 15 s pass).
std::vector<std::pair<std::string, std::string>> wait_for_processes(const TempDir& dir, size_t count,
                                                                    const std::string& state) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline) {
    rows.clear();
    const ProcessResult list = ctl(dir, {"list"});
    std::istringstream lines(list.out);
    size_t matching = 0;
    for (std::string line; std::getline(lines, line);) {
      std::istringstream fields(line);
      std::string pid, rank, row_state;
      if (line.rfind("  ", 0) != 0 || !(fields >> pid >> rank >> row_state) || pid == "PID") continue;
      rows.push_back({pid, row_state});
      matching += row_state == state;
    }
    if (matching >= count) return rows;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "fewer than " << count << " processes became " << state;
  return rows;
}

// Waits (up to 30 s) for a file the program creates once it has done a step:
// under a sanitizer, starting up can take longer than a run's first second.
void wait_for_file(const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (access(path.c_str(), F_OK) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ADD_FAILURE() << path << " did not appear";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::set<int> recorded_steps(const CudaTrace& trace) {
  const std::vector<int> copies = step_copies(trace);
  return {copies.begin(), copies.end()};
}

TEST(Ctl, IdleJobRecordsOnlyBetweenStartAndStop) {
  TempDir dir;
  const std::string started = dir.path() + "/started";
  std::vector<std::string> program = {build_path("CAPTURE_STEPS"), "--steps", "50", "--sleep-ms", "30"};
  const ProcessResult plain = testing::run_process(untraced(program));
  program.insert(program.end(), {"--started-file", started});
  const std::string trace = dir.path() + "/idle.trace";
  RunningProcess job(traced(trace, program, {"--idle"}, control_env(dir)));
  const auto rows = wait_for_processes(dir, 1, "idle");
  ASSERT_EQ(rows.size(), 1u);
  const std::string pid = rows[0].first;
  wait_for_file(started);  // a window from the start would prove less

  const ProcessResult start = ctl(dir, {"start", "--pid", pid});
  EXPECT_TRUE(start.exited_with(0)) << start.describe();
  EXPECT_NE(start.out.find("started 1 process"), std::string::npos) << start.out;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string now = dir.path() + "/now.trace";
  const ProcessResult stop = ctl(dir, {"stop", "--pid", pid, "-o", now});
  EXPECT_TRUE(stop.exited_with(0)) << stop.describe();
  EXPECT_NE(stop.out.find("written " + now), std::string::npos) << stop.out;

  // The trace written now: one window, opened and closed by request, holding
  // some steps in the middle of the run.
  const CudaTrace snapshot = load_trace_or_fail(now);
  const auto begins = windows(snapshot, CaptureWindowAction::kBegin);
  const auto ends = windows(snapshot, CaptureWindowAction::kEnd);
  ASSERT_EQ(begins.size(), 1u) << describe(snapshot);
  ASSERT_EQ(ends.size(), 1u) << describe(snapshot);
  EXPECT_EQ(begins[0].trigger, static_cast<uint8_t>(CaptureTrigger::kRequest));
  EXPECT_EQ(ends[0].trigger, static_cast<uint8_t>(CaptureTrigger::kRequest));
  const std::set<int> steps = recorded_steps(snapshot);
  EXPECT_FALSE(steps.empty()) << describe(snapshot);
  EXPECT_LT(steps.size(), 50u);
  EXPECT_GT(*steps.begin(), 0);  // not from the start
  for (const ProcessImage& image : snapshot.images)
    for (const SpanRecord& call : image.spans) {
      EXPECT_GE(call.span.begin_ns, begins[0].at_ns) << call.api;
      EXPECT_LE(call.span.begin_ns, ends[0].at_ns) << call.api;
    }

  const ProcessResult finished = job.wait();
  EXPECT_TRUE(finished.exited_with(0)) << finished.describe();
  EXPECT_EQ(finished.out, plain.out);
  // The run's own trace holds the same single window: the same steps, or
  // one more, since a call in flight when the window closed is recorded at
  // its return, which may come after the snapshot was copied (seen once
  // with two tests running at once: steps 2-11 against 2-12).
  const CudaTrace whole = load_trace_or_fail(trace);
  std::set<int> whole_steps = recorded_steps(whole);
  if (whole_steps.size() == steps.size() + 1 && !steps.empty() && *whole_steps.rbegin() == *steps.rbegin() + 1)
    whole_steps.erase(std::prev(whole_steps.end()));
  EXPECT_EQ(whole_steps, steps);
  EXPECT_EQ(windows(whole, CaptureWindowAction::kBegin).size(), 1u);
}

TEST(Ctl, RingJobOfFourRanksDumpsOneFilePerRankInOneCommand) {
  TempDir dir;
  const std::vector<std::string> job_command = {
      build_path("TORCHRUN_LIKE"), "--nproc", "4", build_path("NCCL_RANKS"), "--count", "1024", "--iterations", "40",
      "--slow-rank", "0", "--delay-ms", "50", "--ops", "allreduce", "--started-file", dir.path() + "/started"};
  const std::string trace = dir.path() + "/job.trace";
  // The launcher-like parent only waits for its workers and makes no GPU
  // call: with the OS runtime hooks on, its waitpid would make it a fifth
  // recording process, and with CPU samples it would hold something to dump.
  RunningProcess job(traced(trace, job_command, {"--ring=30s", "--osrt-threshold=off", "--cpu-sampling=off"},
                            control_env(dir)));
  wait_for_processes(dir, 4, "ring");
  for (int rank = 0; rank < 4; ++rank) wait_for_file(dir.path() + "/started.rank" + std::to_string(rank));

  const std::string out = dir.path() + "/now.trace";
  const ProcessResult dump = ctl(dir, {"dump", "--pid", std::to_string(job.pid()), "-o", out});
  EXPECT_TRUE(dump.exited_with(0)) << dump.describe();
  EXPECT_NE(dump.out.find("dumped 4 process"), std::string::npos) << dump.out;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string path = dir.path() + "/now.rank" + std::to_string(rank) + ".trace";
    EXPECT_NE(dump.out.find("written " + path), std::string::npos) << dump.out;
    const CudaTrace one = load_trace_or_fail(path);
    ASSERT_EQ(one.images.size(), 1u) << path << ": " << describe(one);
    const auto begins = windows(one, CaptureWindowAction::kBegin);
    ASSERT_EQ(begins.size(), 1u) << describe(one);
    EXPECT_EQ(begins[0].trigger, static_cast<uint8_t>(CaptureTrigger::kRequest));
    EXPECT_FALSE(one.images[0].spans.empty()) << describe(one);
  }
  const ProcessResult finished = job.wait();
  EXPECT_TRUE(finished.exited_with(0)) << finished.describe();
  // The dumps are in the run's trace too (no --ring-dump-at-exit: only them).
  const CudaTrace whole = load_trace_or_fail(trace);
  EXPECT_EQ(windows(whole, CaptureWindowAction::kBegin).size(), 4u) << describe(whole);
}

TEST(Ctl, RefusesBadInputUnknownPidsAndStartOnAWholeRunJob) {
  TempDir dir;
  EXPECT_TRUE(ctl(dir, {"start"}).exited_with(2));
  EXPECT_TRUE(ctl(dir, {"frobnicate"}).exited_with(2));
  const ProcessResult no_duration = ctl(dir, {"start", "--pid", "1", "-o", dir.path() + "/x.trace"});
  EXPECT_TRUE(no_duration.exited_with(2)) << no_duration.describe();
  EXPECT_NE(no_duration.err.find("--duration"), std::string::npos) << no_duration.err;
  const ProcessResult bad_duration = ctl(dir, {"start", "--pid", "1", "--duration", "soon"});
  EXPECT_TRUE(bad_duration.exited_with(2)) << bad_duration.describe();

  const ProcessResult none = ctl(dir, {"list"});
  EXPECT_TRUE(none.exited_with(0)) << none.describe();
  EXPECT_NE(none.out.find("no traced job"), std::string::npos) << none.out;

  const std::vector<std::string> program = {build_path("CAPTURE_STEPS"), "--steps", "60", "--sleep-ms", "30",
                                            "--started-file", dir.path() + "/started"};
  RunningProcess job(traced(dir.path() + "/whole.trace", program, {}, control_env(dir)));
  const auto rows = wait_for_processes(dir, 1, "recording");
  ASSERT_EQ(rows.size(), 1u);
  const ProcessResult start = ctl(dir, {"start", "--pid", rows[0].first});
  EXPECT_TRUE(start.exited_with(1)) << start.describe();
  EXPECT_NE(start.err.find("--idle"), std::string::npos) << start.err;
  const ProcessResult unknown = ctl(dir, {"dump", "--pid", "999999999"});
  EXPECT_TRUE(unknown.exited_with(1)) << unknown.describe();
  EXPECT_NE(unknown.err.find("no traced process with pid 999999999"), std::string::npos) << unknown.err;
  // dump on a streaming job: flushes, and -o writes what was recorded so far.
  wait_for_file(dir.path() + "/started");
  const ProcessResult dump = ctl(dir, {"dump", "--pid", rows[0].first, "-o", dir.path() + "/sofar.trace"});
  EXPECT_TRUE(dump.exited_with(0)) << dump.describe();
  const CudaTrace sofar = load_trace_or_fail(dir.path() + "/sofar.trace");
  EXPECT_FALSE(recorded_steps(sofar).empty()) << describe(sofar);
  EXPECT_TRUE(job.wait().exited_with(0));
}

TEST(Ctl, StaleSocketsAreRemovedAndAnOpenDirectoryIsRefused) {
  TempDir dir;
  const std::string ctl_dir = dir.path() + "/ctl";
  ASSERT_EQ(mkdir(ctl_dir.c_str(), 0700), 0);
  // A socket whose job is gone: bound, then its listener closed.
  const std::string stale = ctl_dir + "/12345.sock";
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strcpy(address.sun_path, stale.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  close(fd);
  const ProcessResult list = ctl(dir, {"list"});
  EXPECT_TRUE(list.exited_with(0)) << list.describe();
  EXPECT_NE(access(stale.c_str(), F_OK), 0) << "the stale socket is still there";

  ASSERT_EQ(chmod(ctl_dir.c_str(), 0755), 0);
  const ProcessResult open = ctl(dir, {"list"});
  EXPECT_TRUE(open.exited_with(1)) << open.describe();
  EXPECT_NE(open.err.find("0700"), std::string::npos) << open.err;
}

TEST(Ctl, AnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  TempDir dir;
  const std::vector<std::string> program = {build_path("CAPTURE_STEPS"), "--steps", "60", "--sleep-ms", "30"};
  RunningProcess job(traced(dir.path() + "/whole.trace", program, {"--idle"}, control_env(dir)));
  wait_for_processes(dir, 1, "idle");
  const std::string socket_path = dir.path() + "/ctl/" + std::to_string(job.pid()) + ".sock";
  // The directory keeps other users out; open it (and the socket) to reach
  // the launcher's own check of the peer's credentials.
  chmod(dir.path().c_str(), 0755);
  chmod((dir.path() + "/ctl").c_str(), 0755);
  chmod(socket_path.c_str(), 0666);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strcpy(address.sun_path, socket_path.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) _exit(11);
    // The launcher may answer and close before reading: no SIGPIPE.
    const char request[] = "list\n";
    send(fd, request, sizeof request - 1, MSG_NOSIGNAL);
    char answer[512] = {};
    const ssize_t n = read(fd, answer, sizeof answer - 1);
    if (n > 0 && write(pipe_fds[1], answer, static_cast<size_t>(n)) < 0) _exit(13);
    _exit(0);
  }
  close(pipe_fds[1]);
  char answer[512] = {};
  const ssize_t n = read(pipe_fds[0], answer, sizeof answer - 1);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(answer).rfind("error permission denied", 0), 0u) << answer;
  EXPECT_EQ(std::string(answer).find("process"), std::string::npos) << answer;
  job.send(SIGTERM);
  job.wait();
}

}  // namespace
}  // namespace proflaunch::e2e
