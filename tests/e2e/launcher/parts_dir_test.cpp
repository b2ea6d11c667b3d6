// The parts directory's rules, piece by piece: exclusive creation, the lock,
// the pid in a part's name, and what counts as a process still writing.
#include "launcher/parts_dir.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace proflaunch::launcher {
namespace {

struct ScratchDir {
  ScratchDir() {
    char pattern[] = "/tmp/parts_dir_test.XXXXXX";
    path = mkdtemp(pattern);
  }
  ~ScratchDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string path;
};

TEST(PartsDir, OnlyOneMkdirMakesIt) {
  ScratchDir scratch;
  const std::string dir = scratch.path + "/out.trace.parts";
  std::string error;
  EXPECT_EQ(make_parts_dir(dir, &error), MakeDir::kMade);
  EXPECT_EQ(make_parts_dir(dir, &error), MakeDir::kExists);
  std::ofstream(scratch.path + "/file.parts") << "x";
  EXPECT_EQ(make_parts_dir(scratch.path + "/file.parts", &error), MakeDir::kFailed);
  EXPECT_NE(error.find("not a directory"), std::string::npos) << error;
  EXPECT_EQ(make_parts_dir(scratch.path + "/missing/x.parts", &error), MakeDir::kFailed);
  EXPECT_NE(error.find("cannot create"), std::string::npos) << error;
}

TEST(PartsDir, TheLockIsHeldByOneHolderAtATimeAndNamesIt) {
  ScratchDir scratch;
  PartsLock first, second;
  std::string error;
  ASSERT_TRUE(first.acquire(scratch.path, &error)) << error;
  EXPECT_FALSE(second.acquire(scratch.path, &error));
  EXPECT_NE(error.find("another proflaunch (pid " + std::to_string(getpid()) + ")"), std::string::npos) << error;
  first.release();
  EXPECT_TRUE(second.acquire(scratch.path, &error)) << error;

  // A holder that dies lets go.
  second.release();
  const pid_t child = fork();
  if (child == 0) {
    PartsLock held;
    std::string ignored;
    _exit(held.acquire(scratch.path, &ignored) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(first.acquire(scratch.path, &error)) << error;

  EXPECT_FALSE(PartsLock().acquire(scratch.path + "/missing", &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}

TEST(PartsDir, APartsPidIsTheNumberBeforeTheDash) {
  EXPECT_EQ(part_pid("1234-00000000deadbeef.part"), 1234u);
  EXPECT_EQ(part_pid("1-0.part"), 1u);
  EXPECT_EQ(part_pid("-12.part"), 0u);
  EXPECT_EQ(part_pid("12.part"), 0u);
  EXPECT_EQ(part_pid("0-1.part"), 0u);
  EXPECT_EQ(part_pid("x12-1.part"), 0u);
  EXPECT_EQ(part_pid("99999999999-1.part"), 0u) << "too long for a pid";
}

TEST(PartsDir, AProcessIsStillWritingWhileItRunsWithThisDirectoryInItsEnvironment) {
  ScratchDir scratch;
  const std::string dir = scratch.path + "/run.trace.parts";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string variable = "PROFLAUNCH_PARTS_DIR=" + dir;
  const pid_t child = fork();
  if (child == 0) {
    char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    char* envp[] = {const_cast<char*>(variable.c_str()), nullptr};
    execve("/bin/sleep", argv, envp);
    _exit(127);
  }
  // Once exec'd, its environment is the one given.
  for (int i = 0; i < 200 && !traced_into(static_cast<uint32_t>(child), dir); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(traced_into(static_cast<uint32_t>(child), dir));
  EXPECT_FALSE(traced_into(static_cast<uint32_t>(child), dir + "x")) << "another run's process";
  EXPECT_FALSE(traced_into(static_cast<uint32_t>(getpid()), dir)) << "never the launcher itself";

  // Found through its part's name, or through the pids given.
  std::ofstream(dir + "/" + std::to_string(child) + "-0000000000000001.part") << "";
  std::ofstream(dir + "/" + std::to_string(getpid()) + "-0000000000000002.part") << "";
  EXPECT_EQ(running_writers(dir), std::vector<uint32_t>{static_cast<uint32_t>(child)});
  std::vector<std::string> names;
  std::string error;
  names = part_names(dir, &error);
  EXPECT_EQ(names.size(), 2u);
  discard_parts(dir);
  EXPECT_FALSE(has_parts(dir));
  EXPECT_TRUE(running_writers(dir).empty()) << "no part names it, no pid given";
  EXPECT_EQ(running_writers(dir, {static_cast<uint32_t>(child), static_cast<uint32_t>(child)}),
            std::vector<uint32_t>{static_cast<uint32_t>(child)});

  // Killed and not yet reaped: a zombie writes nothing more.
  kill(child, SIGKILL);
  for (int i = 0; i < 200 && traced_into(static_cast<uint32_t>(child), dir); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(traced_into(static_cast<uint32_t>(child), dir));
  EXPECT_EQ(kill(child, 0), 0) << "still a zombie: not reaped yet";
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(traced_into(static_cast<uint32_t>(child), dir));
}

}  // namespace
}  // namespace proflaunch::launcher
