// Dying processes: a crash flushes what was recorded and still dies the same
// way; SIGKILL loses at most the flush interval; the program's SIGINT and
// SIGTERM handlers stay the program's (Python's included).
#include <gtest/gtest.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include "tests/unit/preload/support/shim_run.h"

namespace proflaunch::testing {
namespace {

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void check_crash(const std::string& mode, int signal_number) {
  TempDir parts;
  const std::vector<std::string> args = {mode, "400"};
  const ProcessResult plain = run_process(untraced_probe(args));
  const ProcessResult traced = run_process(traced_probe(parts.path(), args));
  ASSERT_TRUE(plain.killed_by(signal_number)) << plain.describe();
  EXPECT_EQ(traced.status, plain.status) << traced.describe();  // same signal, same core flag
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, plain.err);

  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  // All 400 were recorded just before the crash: only the crash flush can
  // have written them (the periodic one is 100 ms away).
  EXPECT_EQ(section.calls.size(), 400u);
  EXPECT_FALSE(section.end.has_value()) << "a crashed process has no SectionEnd";
}

TEST(ShimCrash, SegfaultFlushesAndDiesOfSigsegv) { check_crash("segv", SIGSEGV); }

TEST(ShimCrash, AbortFlushesAndDiesOfSigabrt) { check_crash("abort", SIGABRT); }

TEST(ShimKill, SigkillLosesNothingOlderThanTheFlushWindow) {
  TempDir parts;
  RunningProcess process(traced_probe(parts.path(), {"loop", "50"}));
  ASSERT_TRUE(process.wait_for_line("ready", 10000));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const uint64_t kill_ns = monotonic_ns();
  process.send(SIGKILL);
  const ProcessResult result = process.wait();
  ASSERT_TRUE(result.killed_by(SIGKILL)) << result.describe();

  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_FALSE(section.end.has_value());

  // The program emitted 0, 1, 2... one per millisecond. What survived must be
  // a gap-free prefix reaching to within 200 ms of the kill.
  std::vector<uint64_t> values;
  uint64_t last_begin_ns = 0;
  for (const ProbeCall& call : section.calls) {
    values.push_back(call.value());
    last_begin_ns = std::max(last_begin_ns, call.record.span.begin_ns);
  }
  ASSERT_GE(values.size(), 50u);
  for (uint64_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], i);
  // Every event older than 200 ms at the kill is there: the newest one kept
  // is at most 200 ms (plus one emit period) older than the kill.
  EXPECT_GE(last_begin_ns + 200000000u + 20000000u, kill_ns)
      << "newest surviving event is " << (kill_ns - last_begin_ns) / 1000000 << " ms old";
}

void check_program_handler(const std::string& mode, int signal_number) {
  TempDir parts;
  RunningProcess process(traced_probe(parts.path(), {mode}));
  ASSERT_TRUE(process.wait_for_line("ready", 10000));
  process.send(signal_number);
  const ProcessResult result = process.wait();
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "ready\nhandled signal " + std::to_string(signal_number) + "\n");
  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_GE(section.calls.size(), 100u);
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_written, section.calls.size());
}

TEST(ShimSignals, TheProgramsSigtermHandlerRuns) { check_program_handler("sigterm", SIGTERM); }

TEST(ShimSignals, TheProgramsSigintHandlerRuns) { check_program_handler("sigint", SIGINT); }

TEST(ShimSignals, PythonKeepsItsSignalHandlers) {
  // Python installs KeyboardInterrupt only if SIGINT is SIG_DFL at startup,
  // and reports a foreign SIGTERM handler as None: the shim must touch neither.
  TempDir parts;
  RunOptions options;
  options.argv = {required_env("PYTHON3"), "-c",
                  "import os, signal\n"
                  "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n"
                  "print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)\n"
                  "try:\n"
                  "    os.kill(os.getpid(), signal.SIGINT)\n"
                  "    signal.pause()\n"
                  "except KeyboardInterrupt:\n"
                  "    print('KeyboardInterrupt')\n"};
  options.set_env = {{"LD_PRELOAD", preload_list(probe_shim_path())}, {"PROFLAUNCH_PARTS_DIR", parts.path()}};
  const ProcessResult result = run_process(options);
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "True\nTrue\nKeyboardInterrupt\n");
  EXPECT_EQ(result.err, "");
}

}  // namespace
}  // namespace proflaunch::testing
