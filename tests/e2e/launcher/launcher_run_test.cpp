// The launcher as a user meets it: exit codes, output names, refusing to
// overwrite, the user's LD_PRELOAD, and a program that behaves exactly as it
// does untraced.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <regex>

#include "tests/e2e/launcher/launcher_run.h"

namespace proflaunch::testing {
namespace {

TEST(LauncherExitCodes, TheProgramsExitCodeIsTheLaunchers) {
  TempDir dir;
  const ProcessResult ok =
      run_process(launcher_options({"-q", "-o", dir / "ok.trace"}, probe({"emit", "10"})));
  EXPECT_TRUE(ok.exited_with(0)) << ok.describe();
  const ProcessResult three =
      run_process(launcher_options({"-q", "-o", dir / "three.trace"}, probe({"emit", "10", "3"})));
  EXPECT_TRUE(three.exited_with(3)) << three.describe();
  EXPECT_EQ(three.err, "");
}

TEST(LauncherExitCodes, AProgramKilledByASignalGives128PlusItsNumber) {
  TempDir dir;
  const ProcessResult segv =
      run_process(launcher_options({"-q", "-o", dir / "segv.trace"}, probe({"segv", "10"})));
  EXPECT_TRUE(segv.exited_with(128 + SIGSEGV)) << segv.describe();
  EXPECT_EQ(segv.err, "");  // nothing misleading, no "Segmentation fault" from us
  const ProcessResult term = run_process(
      launcher_options({"-q", "-o", dir / "term.trace"}, {"/bin/sh", "-c", "kill -TERM $$"}));
  EXPECT_TRUE(term.exited_with(128 + SIGTERM)) << term.describe();
  // The crashed program's records were still joined.
  EXPECT_EQ(load_file(dir / "segv.trace").total_calls(), 10u);
}

TEST(LauncherExitCodes, AMissingProgramGives127AndANonExecutableOne126) {
  TempDir dir;
  const ProcessResult missing = run_process(
      launcher_options({"-o", dir / "m.trace"}, {"proflaunch-no-such-program"}));
  EXPECT_TRUE(missing.exited_with(127)) << missing.describe();
  EXPECT_EQ(missing.err, "proflaunch: proflaunch-no-such-program: command not found\n");
  EXPECT_FALSE(file_exists(dir / "m.trace.parts"));

  std::ofstream(dir / "script.txt") << "not a program\n";
  const ProcessResult not_executable =
      run_process(launcher_options({"-o", dir / "n.trace"}, {dir / "script.txt"}));
  EXPECT_TRUE(not_executable.exited_with(126)) << not_executable.describe();
  EXPECT_NE(not_executable.err.find("Permission denied"), std::string::npos);
}

TEST(LauncherOutput, ProgramOutputIsByteIdenticalToAnUntracedRun) {
  TempDir dir;
  const std::vector<std::string> args = {"output", "20000", "3"};
  const ProcessResult plain = run_process(untraced_probe(args));
  const ProcessResult quiet =
      run_process(launcher_options({"-q", "-o", dir / "q.trace"}, probe(args)));
  EXPECT_EQ(quiet.status, plain.status);
  EXPECT_EQ(quiet.out, plain.out);
  EXPECT_EQ(quiet.err, plain.err);

  // Without -q: the same, plus one summary line at the very end.
  const ProcessResult loud = run_process(launcher_options({"-o", dir / "l.trace"}, probe(args)));
  EXPECT_EQ(loud.status, plain.status);
  EXPECT_EQ(loud.out, plain.out);
  ASSERT_GT(loud.err.size(), plain.err.size());
  EXPECT_EQ(loud.err.substr(0, plain.err.size()), plain.err);
  const std::string summary = loud.err.substr(plain.err.size());
  EXPECT_TRUE(std::regex_match(
      summary, std::regex("proflaunch: .*l\\.trace: 1 process, 20000 events, 0 dropped, "
                          "[0-9.]+ (B|KiB|MiB)\n")))
      << summary;
}

TEST(LauncherOutput, PlaceholdersExpand) {
  TempDir dir;
  RunOptions options = launcher_options({"-q", "-o", dir / "run-%p-%q{RUN_TAG}-%%.trace"},
                                        probe({"emit", "5"}));
  options.set_env.emplace_back("RUN_TAG", "nightly");
  const ProcessResult result = run_process(options);
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  const auto files = list_files(dir.path(), ".trace");
  ASSERT_EQ(files.size(), 1u);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(files[0], match, std::regex("run-([0-9]+)-nightly-%\\.trace$")))
      << files[0];
  // %p is the traced program's pid, not the launcher's.
  const TraceContents trace = load_file(files[0]);
  ASSERT_EQ(trace.sections.size(), 1u);
  EXPECT_EQ(std::to_string(trace.sections.begin()->second.process->pid), match[1].str());

  char host[256] = {};
  gethostname(host, sizeof host - 1);
  ASSERT_TRUE(run_process(launcher_options({"-q", "-o", dir / "h-%h.trace"}, probe({"emit", "1"})))
                  .exited_with(0));
  EXPECT_TRUE(file_exists(dir / ("h-" + std::string(host) + ".trace")));
}

TEST(LauncherOutput, CounterPicksTheFirstFreeName) {
  TempDir dir;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(run_process(launcher_options({"-q", "-o", dir / "r%n.trace"}, probe({"emit", "1"})))
                    .exited_with(0));
  EXPECT_EQ(list_files(dir.path(), ".trace"),
            (std::vector<std::string>{dir / "r1.trace", dir / "r2.trace", dir / "r3.trace"}));
}

TEST(LauncherOutput, BadPlaceholdersStopBeforeTheProgramRuns) {
  TempDir dir;
  const std::string marker = dir / "ran";
  const ProcessResult unset = run_process(
      launcher_options({"-o", dir / "x-%q{PROFLAUNCH_TEST_UNSET}.trace"}, {"touch", marker}));
  EXPECT_TRUE(unset.exited_with(2)) << unset.describe();
  EXPECT_NE(unset.err.find("PROFLAUNCH_TEST_UNSET' is not set"), std::string::npos);
  const ProcessResult unknown =
      run_process(launcher_options({"-o", dir / "x-%z.trace"}, {"touch", marker}));
  EXPECT_TRUE(unknown.exited_with(2)) << unknown.describe();
  EXPECT_FALSE(file_exists(marker));
}

TEST(LauncherOutput, AnExistingTraceIsKeptUnlessForced) {
  TempDir dir;
  const std::string output = dir / "run.trace";
  const std::string marker = dir / "ran";
  std::ofstream(output) << "precious";
  const ProcessResult refused =
      run_process(launcher_options({"-o", output}, {"touch", marker}));
  EXPECT_TRUE(refused.exited_with(1)) << refused.describe();
  EXPECT_NE(refused.err.find("already exists"), std::string::npos);
  EXPECT_NE(refused.err.find("--force"), std::string::npos);
  EXPECT_FALSE(file_exists(marker)) << "the program must not run";
  std::ifstream kept(output);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "precious");

  const ProcessResult forced =
      run_process(launcher_options({"-q", "--force", "-o", output}, probe({"emit", "7"})));
  ASSERT_TRUE(forced.exited_with(0)) << forced.describe();
  EXPECT_EQ(load_file(output).total_calls(), 7u);
}

TEST(LauncherEnvironment, TheUsersPreloadsStayAfterTheShim) {
  TempDir dir;
  const std::string marker_lib = required_env("PRELOAD_MARKER");
  RunOptions options = launcher_options({"-q", "-o", dir / "p.trace"},
                                        {"/bin/sh", "-c", "echo \"$LD_PRELOAD\""});
  options.unset_env.clear();
  // In a sanitized build the launcher itself needs its runtime first, and
  // that entry stays first in the program's list (launcher/preload_list.h).
  const std::string users = preload_list(marker_lib);
  const std::string runtime = users.substr(0, users.size() - marker_lib.size());
  options.set_env.emplace_back("LD_PRELOAD", users);
  const ProcessResult result = run_process(options);
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, runtime + probe_shim_path() + ":" + marker_lib + "\n");
  // The user's library was really loaded (into the launcher too: it is
  // preloaded for everything the user starts, the launcher included).
  EXPECT_NE(result.err.find("preload-marker loaded"), std::string::npos);
}

TEST(LauncherEnvironment, TheRealShimIsFoundNextToTheLauncherAndChangesNothing) {
  // No PROFLAUNCH_LIBRARY: the launcher finds libproflaunch.so in the build
  // tree by itself. A Python program that forks, spawns, execs and uses
  // threads behaves exactly as it does untraced (this shim has no CUDA hooks
  // yet, so it records nothing and leaves no part).
  TempDir dir;
  const std::string script =
      "import os, subprocess, sys, threading\n"
      "t = threading.Thread(target=lambda: print('thread', flush=True)); t.start(); t.join()\n"
      "pid = os.fork()\n"
      "if pid == 0:\n"
      "    print('child', flush=True); os._exit(4)\n"
      "print('child status', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)\n"
      "r = subprocess.run(['sh', '-c', 'echo spawned; echo err >&2; exit 6'])\n"
      "print('spawned status', r.returncode, flush=True)\n"
      "r = subprocess.run(['sh', '-c', 'exec echo exec'], env={})\n"
      "print('stderr line', file=sys.stderr)\n"
      "sys.exit(9)\n";
  RunOptions plain;
  plain.argv = {required_env("PYTHON3"), "-c", script};
  plain.unset_env = {"LD_PRELOAD"};
  const ProcessResult untraced = run_process(plain);
  ASSERT_TRUE(untraced.exited_with(9)) << untraced.describe();

  RunOptions options =
      launcher_options({"-q", "-o", dir / "real.trace"}, {required_env("PYTHON3"), "-c", script});
  options.set_env.clear();
  options.unset_env.push_back("PROFLAUNCH_LIBRARY");
  const ProcessResult traced = run_process(options);
  EXPECT_EQ(traced.status, untraced.status);
  EXPECT_EQ(traced.out, untraced.out);
  EXPECT_EQ(traced.err, untraced.err);
  EXPECT_TRUE(file_exists(dir / "real.trace"));

  // ... and it really was loaded, in the program's descendants too.
  RunOptions maps = launcher_options({"-q", "-o", dir / "maps.trace"},
                                     {"/bin/sh", "-c", "grep -c '/libproflaunch.so' /proc/self/maps"});
  maps.set_env.clear();
  maps.unset_env.push_back("PROFLAUNCH_LIBRARY");
  const ProcessResult loaded = run_process(maps);
  ASSERT_TRUE(loaded.exited_with(0)) << loaded.describe();
  EXPECT_NE(loaded.out, "0\n");
}

// Programs built with -fsanitize=address or =thread die at start unless their
// runtime is the first library loaded: the launcher puts it ahead of the shim.
class LauncherSanitizedProgram : public ::testing::TestWithParam<const char*> {};

TEST_P(LauncherSanitizedProgram, RunsAsItDoesUntracedAndIsTraced) {
  const char* app = std::getenv(GetParam());
  if (app == nullptr) GTEST_SKIP() << "a sanitized build: no separately instrumented app";
  TempDir dir;
  // With the probe shim: the program's calls are recorded.
  const ProcessResult traced = run_process(launcher_options({"-q", "-o", dir / "a.trace"}, {app, "emit", "10", "3"}));
  ASSERT_TRUE(traced.exited_with(3)) << traced.describe();
  EXPECT_EQ(traced.out, "emitted 10\n");
  EXPECT_EQ(traced.err, "");
  EXPECT_EQ(load_file(dir / "a.trace").total_calls(), 10u);

  // With the real shim (found next to the launcher), threads and forks.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{app, "threads", "4", "50"}, {app, "fork", "3"}}) {
    RunOptions plain;
    plain.argv = args;
    const ProcessResult untraced = run_process(plain);
    ASSERT_TRUE(untraced.exited_with(0)) << untraced.describe();
    RunOptions options = launcher_options({"-q", "--force", "-o", dir / "b.trace"}, args);
    options.set_env.clear();
    options.unset_env.push_back("PROFLAUNCH_LIBRARY");
    const ProcessResult real = run_process(options);
    EXPECT_TRUE(real.exited_with(0)) << args[1] << ": " << real.describe();
    EXPECT_EQ(real.out, untraced.out) << args[1];
    EXPECT_EQ(real.err, untraced.err) << args[1];
  }
}

void check_fork_storm(const char* app, const std::string& tsan_options);

// GCC 12's ASan runtime does not lock its allocator across fork: a child
// forked while the shim's writer was inside malloc (ASan's, in such a
// program) hung at its first allocation. fork waits for the writer's round.
TEST_P(LauncherSanitizedProgram, ForksWhileTheWriterIsBusyDoNotHangTheChildren) {
  const char* app = std::getenv(GetParam());
  if (app == nullptr) GTEST_SKIP() << "a sanitized build: no separately instrumented app";
  // ThreadSanitizer: the launcher sets die_after_fork=0, so the children
  // start writer threads; with the user's die_after_fork=1 they may not, and
  // each child's exit writes its section.
  const bool tsan = std::string(GetParam()) == "PROBE_APP_THREAD";
  for (const char* tsan_options : {"", "die_after_fork=1"}) {
    if (*tsan_options != '\0' && !tsan) continue;
    SCOPED_TRACE(std::string("TSAN_OPTIONS=") + tsan_options);
    check_fork_storm(app, tsan_options);
  }
}

void check_fork_storm(const char* app, const std::string& tsan_options) {
  TempDir dir;
  RunOptions options = launcher_options({"-q", "-o", dir / "storm.trace"}, {app, "fork-storm", "200", "2"});
  options.timeout_ms = 120000;
  if (!tsan_options.empty()) options.set_env.emplace_back("TSAN_OPTIONS", tsan_options);
  const ProcessResult storm = run_process(options);
  ASSERT_TRUE(storm.exited_with(0)) << storm.describe();
  EXPECT_EQ(storm.out, "forks done, 0 failed\n");
  const TraceContents trace = load_file(dir / "storm.trace");
  EXPECT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 201u) << "the parent and every child";
  // Every child's ten events reach the file, ended (in a TSan-built program
  // the child may not start a thread: its exit writes them).
  uint32_t children = 0;
  for (const auto& [id, section] : trace.sections) {
    if (!section.process || !(section.process->flags & format::kProcessForked)) continue;
    ++children;
    EXPECT_EQ(section.calls.size() + section.lost_count(), 10u);
    EXPECT_EQ(section.lost_count(), 0u);
    EXPECT_TRUE(section.end.has_value());
  }
  EXPECT_EQ(children, 200u);
}

INSTANTIATE_TEST_SUITE_P(Sanitizers, LauncherSanitizedProgram,
                         ::testing::Values("PROBE_APP_ADDRESS", "PROBE_APP_THREAD"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param).substr(sizeof "PROBE_APP_" - 1);
                         });

}  // namespace
}  // namespace proflaunch::testing
