// SIGKILL in the middle of a run. The launcher is the program's parent, so
// either can be killed:
//  - the program: the launcher sees it die, joins the parts and exits 128+9;
//  - the launcher (and then the orphaned program, as a batch system does):
//    `proflaunch --join` assembles what the parts hold.
// Either way the trace is readable and holds every iteration up to the
// program's ready line, which came more than the flush interval (at most
// 200 ms) before the kill.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr int kReadyAfter = 20;
constexpr int kLaunchesPerIteration = 3;
// Longer than the 200 ms the shim may hold records before writing them.
constexpr auto kPastFlushWindow = std::chrono::milliseconds(350);

std::vector<std::string> long_running() {
  return {build_path("LONG_RUNNING"), "--ready-after", std::to_string(kReadyAfter), "--seconds", "20",
          "--launches-per-iteration", std::to_string(kLaunchesPerIteration)};
}

// The one child of `parent` (the traced program under the launcher), from
// /proc/<pid>/task/<pid>/children or, on kernels without it, by the ppid
// field of every /proc/<pid>/stat.
pid_t only_child_of(pid_t parent) {
  std::ifstream children("/proc/" + std::to_string(parent) + "/task/" + std::to_string(parent) + "/children");
  pid_t child = -1;
  if (children >> child) return child;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  while (dirent* entry = readdir(proc)) {
    const pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    if (!std::getline(stat_file, stat) || stat.rfind(')') == std::string::npos) continue;
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string state;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent) child = pid;
  }
  closedir(proc);
  return child;
}

// Dead: reaped, or a zombie waiting for init (an orphan's reaper may be slow).
bool process_dead(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const size_t after_name = stat.rfind(')');
  return after_name == std::string::npos || stat.compare(after_name, 3, ") Z") == 0;
}

// The iterations the trace shows up to the ready point: every launch and
// stream synchronization the program made before it printed the line.
void expect_iterations_up_to_ready(const std::string& trace_path) {
  const ProcessResult info = run_proftrace({"info", trace_path});
  EXPECT_TRUE(info.exited_with(0)) << info.describe();
  const CudaTrace trace = load_trace_or_fail(trace_path);
  ASSERT_EQ(trace.images.size(), 1u) << describe(trace);
  const ProcessImage& image = trace.images.front();
  EXPECT_FALSE(image.end.has_value()) << "a killed process cannot have finished its section";
  EXPECT_EQ(image.launch_count("AddFunctor"), static_cast<int>(image.launches().size()));
  EXPECT_GE(image.launch_count("AddFunctor"), kReadyAfter * kLaunchesPerIteration)
      << describe(trace);
  int stream_syncs = 0;
  for (const HostCall* sync : image.syncs()) stream_syncs += sync->api == "cudaStreamSynchronize";
  EXPECT_GE(stream_syncs, kReadyAfter);
  // Whatever was written is whole: the launches are named and in order.
  uint64_t previous_ns = 0;
  for (const Operation* launch : image.launches()) {
    EXPECT_NE(launch->kernel, "");
    EXPECT_GE(launch->span.begin_ns, previous_ns);
    previous_ns = launch->span.begin_ns;
  }
}

const std::string kReadyLine = "long_running: ready iterations=" + std::to_string(kReadyAfter);

TEST(Kill, KillingTheProgramLetsTheLauncherJoinAndExit137) {
  TempDir dir;
  RunningProcess launcher(traced(dir / "x.trace", long_running()));
  ASSERT_TRUE(launcher.wait_for_line(kReadyLine, 15000));
  std::this_thread::sleep_for(kPastFlushWindow);
  const pid_t program = only_child_of(launcher.pid());
  ASSERT_GT(program, 0);
  ASSERT_EQ(kill(program, SIGKILL), 0);
  const ProcessResult result = launcher.wait();
  ASSERT_TRUE(result.exited_with(128 + SIGKILL)) << result.describe();
  EXPECT_NE(access((dir / "x.trace.parts").c_str(), F_OK), 0) << "parts left behind";
  expect_iterations_up_to_ready(dir / "x.trace");
}

TEST(Kill, KillingTheLauncherLeavesPartsThatJoinAssembles) {
  TempDir dir;
  RunningProcess launcher(traced(dir / "x.trace", long_running()));
  ASSERT_TRUE(launcher.wait_for_line(kReadyLine, 15000));
  std::this_thread::sleep_for(kPastFlushWindow);
  const pid_t program = only_child_of(launcher.pid());
  ASSERT_GT(program, 0);
  launcher.send(SIGKILL);
  const ProcessResult launcher_result = launcher.wait(/*until_output_closes=*/false);
  ASSERT_TRUE(launcher_result.killed_by(SIGKILL));
  // The orphaned program is killed too (a job's whole process tree).
  ASSERT_EQ(kill(program, SIGKILL), 0);
  for (int i = 0; i < 200 && !process_dead(program); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(process_dead(program));
  EXPECT_NE(access((dir / "x.trace").c_str(), F_OK), 0) << "nobody joined yet";

  RunOptions join = untraced({build_path("PROFLAUNCH_EXE"), "--join", dir / "x.trace"});
  const ProcessResult joined = testing::run_process(join);
  ASSERT_TRUE(joined.exited_with(0)) << joined.describe();
  expect_iterations_up_to_ready(dir / "x.trace");
}

}  // namespace
}  // namespace proflaunch::e2e
