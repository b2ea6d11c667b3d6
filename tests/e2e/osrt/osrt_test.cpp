// Where threads wait, end to end: programs run under the real launcher and
// shim, the trace read back (osrt_trace.h). See tests/e2e/README.md.
#include <gtest/gtest.h>

#include <cstdlib>

#include <sys/stat.h>

#include <map>
#include <sstream>

#include "tests/e2e/cuda/support/traced_run.h"
#include "tests/e2e/osrt/osrt_trace.h"

namespace proflaunch::e2e {
namespace {

#define SKIP_IF_SANITIZED() \
  if (sanitized_run()) GTEST_SKIP() << "the sanitizer's interceptors come first (sanitized_run)"


using format::WaitObjectKind;

constexpr uint64_t kThresholdNs = 2000000;  // --osrt-threshold=2ms; the programs wait 20 ms

// "<what> <object>" lines of osrt_waits' output.
std::map<std::string, std::string> printed_objects(const std::string& out) {
  std::map<std::string, std::string> objects;
  std::istringstream lines(out);
  std::string what, object;
  while (lines >> what >> object) {
    objects[what] = object;
    std::string rest;
    std::getline(lines, rest);
  }
  return objects;
}

uint64_t number(const std::string& text) { return std::stoull(text, nullptr, 0); }

std::string all(const OsrtTrace& trace) {
  std::string text;
  for (const BlockingWait& wait : trace.waits) text += "  " + wait.describe() + "\n";
  return text;
}

OsrtTrace load(const std::string& path) {
  std::string error;
  OsrtTrace trace = load_osrt_trace(path, &error);
  EXPECT_EQ(error, "");
  return trace;
}

// The main thread's wait of `api` made from `function`, or null.
const BlockingWait* find_wait(const OsrtTrace& trace, const std::string& api, const std::string& function) {
  for (const BlockingWait& wait : trace.waits)
    if (wait.tid == trace.main_pid && wait.api == api && wait.in_native_function(function)) return &wait;
  return nullptr;
}

TEST(Osrt, EveryKindOfWaitIsRecordedWithItsObjectAndTheProgramsFunction) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string program = build_path("OSRT_WAITS");
  const ProcessResult untraced_run = testing::run_process(untraced({program}));
  ASSERT_TRUE(untraced_run.exited_with(0)) << untraced_run.describe();
  const ProcessResult run = testing::run_process(traced(dir / "w.trace", {program}, {"--osrt-threshold=2ms"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  // Same output lines but for the objects' addresses and descriptors.
  EXPECT_EQ(printed_objects(run.out).size(), printed_objects(untraced_run.out).size()) << run.out;

  const OsrtTrace trace = load(dir / "w.trace");
  const auto objects = printed_objects(run.out);
  ASSERT_GT(trace.waits.size(), 0u);

  struct Expected {
    std::string api;
    std::string function;
    WaitObjectKind kind;
    std::string printed;  // the output line's key whose value is the object ("" : object 0)
    bool address;         // the object is an address (else a number as printed)
  };
  const Expected expected[] = {
      {"pthread_mutex_lock", "wait_on_mutex", WaitObjectKind::kMutex, "mutex", true},
      {"pthread_cond_wait", "wait_on_condition", WaitObjectKind::kCondition, "condition", true},
      {"read", "wait_on_pipe", WaitObjectKind::kPipe, "pipe", false},
      {"__read_chk", "wait_on_pipe_fortified", WaitObjectKind::kPipe, "fortified", false},
      {"recv", "wait_on_socket", WaitObjectKind::kSocket, "socket", false},
      {"nanosleep", "sleep_with_nanosleep", WaitObjectKind::kNone, "", false},
      {"usleep", "sleep_with_usleep", WaitObjectKind::kNone, "", false},
      {"poll", "wait_with_poll", WaitObjectKind::kPipe, "poll", false},
      {"epoll_wait", "wait_with_epoll", WaitObjectKind::kEpoll, "epoll_wait", false},
      {"sem_wait", "wait_on_semaphore", WaitObjectKind::kSemaphore, "semaphore", true},
      {"pthread_join", "wait_for_thread", WaitObjectKind::kThread, "thread", true},
      {"futex", "wait_on_futex", WaitObjectKind::kFutex, "futex", true},
  };
  for (const Expected& e : expected) {
    SCOPED_TRACE(e.api + " in " + e.function);
    const BlockingWait* wait = find_wait(trace, e.api, e.function);
    ASSERT_NE(wait, nullptr) << "recorded:\n" << all(trace);
    EXPECT_EQ(wait->api_domain, static_cast<uint8_t>(format::ApiDomain::kOsRuntime));
    EXPECT_EQ(wait->kind(), e.kind) << wait->describe();
    if (e.printed.empty()) {
      EXPECT_EQ(uint64_t{wait->record.object}, 0u) << wait->describe();
    } else {
      ASSERT_TRUE(objects.count(e.printed)) << run.out;
      EXPECT_EQ(uint64_t{wait->record.object}, number(objects.at(e.printed))) << wait->describe();
    }
    EXPECT_GE(wait->duration_ns(), kThresholdNs) << wait->describe();
    // The stack starts in the program: no frame of the shim is left in it,
    // the innermost is the function that waited (read's fortified inline
    // wrapper, where there is one, inlined into it).
    EXPECT_TRUE(wait->has_stack);
    ASSERT_FALSE(wait->native_frames.empty());
    ASSERT_FALSE(wait->native_frames.front().empty()) << wait->describe();
    EXPECT_EQ(wait->native_frames.front().back(), e.function) << wait->describe();
  }
  // The futex wait timed out: its error is the program's.
  const BlockingWait* futex = find_wait(trace, "futex", "wait_on_futex");
  ASSERT_NE(futex, nullptr);
  EXPECT_EQ(objects.count("futex"), 1u);
  EXPECT_NE(run.out.find("timed-out"), std::string::npos) << run.out;
  EXPECT_EQ(int32_t{futex->record.error}, ETIMEDOUT);
  EXPECT_EQ(int32_t{futex->record.span.result}, -1);
  // Nothing recorded is shorter than the threshold, and the calls that do
  // not wait (200 uncontended locks, polls and usleep(0)) are mostly not there
  // (one may still be preempted past 2 ms on a loaded machine).
  int short_ones = 0;
  for (const BlockingWait& wait : trace.waits) {
    EXPECT_GE(wait.duration_ns(), kThresholdNs) << wait.describe();
    if (wait.in_native_function("short_calls")) ++short_ones;
  }
  EXPECT_LT(short_ones, 20) << all(trace);
}

TEST(Osrt, ThresholdOffRecordsNoWait) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string program = build_path("OSRT_WAITS");
  const ProcessResult run = testing::run_process(traced(dir / "off.trace", {program}, {"--osrt-threshold=off"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const OsrtTrace trace = load(dir / "off.trace");
  EXPECT_EQ(trace.waits.size(), 0u) << all(trace);
}

TEST(Osrt, ShortCallsBelowTheDefaultThresholdAreNotRecorded) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string program = build_path("OSRT_WAITS");
  const ProcessResult run = testing::run_process(traced(dir / "s.trace", {program, "short"}, {"--osrt-threshold=5ms"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const OsrtTrace trace = load(dir / "s.trace");
  int short_ones = 0;
  for (const BlockingWait& wait : trace.waits)
    if (wait.in_native_function("short_calls")) ++short_ones;
  EXPECT_LT(short_ones, 10) << all(trace);
}

// fork, vfork and exec keep working; a forked child's and an exec'd image's
// waits are their own; a vfork child's wait (it runs on the parent's memory
// and thread storage) is recorded nowhere, above all not in the parent's ring.
TEST(Osrt, ForkedAndExecdProcessesRecordTheirOwnWaitsAVforkChildNone) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string program = build_path("OSRT_WAITS");
  const ProcessResult untraced_run = testing::run_process(untraced({program, "processes"}));
  const ProcessResult run =
      testing::run_process(traced(dir / "f.trace", {program, "processes"}, {"--osrt-threshold=2ms"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_EQ(run.out, untraced_run.out);
  EXPECT_NE(run.out.find("processes 0"), std::string::npos) << run.out;
  const OsrtTrace trace = load(dir / "f.trace");
  int fork_child = 0, vfork_child = 0, exec_image = 0;
  for (const BlockingWait& wait : trace.waits) {
    if (wait.in_native_function("fork_child_sleeps")) {
      ++fork_child;
      EXPECT_NE(wait.pid, trace.main_pid) << wait.describe();
      EXPECT_EQ(wait.tid, wait.pid) << wait.describe();
    }
    if (wait.in_native_function("vfork_child_sleeps")) ++vfork_child;
    if (wait.in_native_function("exec_image_sleeps")) {
      ++exec_image;
      EXPECT_NE(wait.pid, trace.main_pid) << wait.describe();
    }
  }
  EXPECT_EQ(fork_child, 1) << all(trace);
  EXPECT_EQ(vfork_child, 0) << all(trace);
  EXPECT_EQ(exec_image, 1) << all(trace);
  // The parent's waits for its children are its own.
  int parent_waits = 0;
  for (const BlockingWait& wait : trace.waits)
    if (wait.pid == trace.main_pid && wait.api == "waitpid" && wait.in_native_function("processes")) {
      ++parent_waits;
      EXPECT_EQ(wait.kind(), WaitObjectKind::kChildProcess);
      EXPECT_NE(uint64_t{wait.record.object}, 0u);
    }
  EXPECT_GE(parent_waits, 2) << all(trace);
}

TEST(Osrt, APythonProgramsWaitsHaveItsPythonFrames) {
  SKIP_IF_SANITIZED();
  TempDir dir;
  const std::string python = build_path("PYTHON3");
  const std::string script = build_path("OSRT_PYTHON_PY");
  const ProcessResult untraced_run = testing::run_process(untraced({python, script}));
  ASSERT_TRUE(untraced_run.exited_with(0)) << untraced_run.describe();
  const ProcessResult run = testing::run_process(traced(dir / "p.trace", {python, script}, {"--osrt-threshold=2ms"}));
  ASSERT_TRUE(run.exited_with(0)) << run.describe();
  const OsrtTrace trace = load(dir / "p.trace");

  // The main thread's wait whose Python frames include all of `functions`.
  auto main_wait_in = [&](std::initializer_list<std::string> functions) -> const BlockingWait* {
    for (const BlockingWait& wait : trace.waits) {
      bool all_there = wait.tid == trace.main_pid;
      for (const std::string& function : functions) all_there = all_there && wait.in_python_function(function);
      if (all_there) return &wait;
    }
    return nullptr;
  };
  // time.sleep: clock_nanosleep (or nanosleep, select on older builds).
  const BlockingWait* nap = main_wait_in({"nap"});
  ASSERT_NE(nap, nullptr) << all(trace);
  EXPECT_EQ(nap->kind(), WaitObjectKind::kNone) << nap->describe();
  // queue.Queue.get: a lock acquired without timeout (a semaphore or a
  // condition variable, depending on the build), under Queue.get's frames.
  // (Python 3.11+ names methods by their qualified name, 3.9 and 3.10 by co_name.)
  const BlockingWait* get = main_wait_in({"wait_for_item", "Queue.get"});
  if (get == nullptr) get = main_wait_in({"wait_for_item", "get"});
  ASSERT_NE(get, nullptr) << all(trace);
  EXPECT_TRUE(get->kind() == WaitObjectKind::kSemaphore || get->kind() == WaitObjectKind::kCondition ||
              get->kind() == WaitObjectKind::kFutex)
      << get->describe();
  // os.read on a pipe: the pipe's descriptor, as the program printed it.
  const BlockingWait* read = nullptr;
  for (const BlockingWait& wait : trace.waits)
    if (wait.tid == trace.main_pid && wait.api == "read" && wait.in_python_function("read_pipe")) read = &wait;
  ASSERT_NE(read, nullptr) << all(trace);
  EXPECT_EQ(read->kind(), WaitObjectKind::kPipe);
  const auto objects = printed_objects(run.out);
  ASSERT_TRUE(objects.count("pipe")) << run.out;
  EXPECT_EQ(uint64_t{read->record.object}, number(objects.at("pipe")));
  for (const BlockingWait* wait : {nap, get, read}) EXPECT_GE(wait->duration_ns(), kThresholdNs) << wait->describe();
}

// Loops that count EINTR print the same and exit the same traced (with
// CPU sampling on, whose signal must never interrupt them) as untraced.
TEST(Osrt, LoopsThatCheckEintrBehaveAsUntraced) {
  TempDir dir;
  const std::string program = build_path("OSRT_EINTR_LOOPS");
  const ProcessResult untraced_run = testing::run_process(untraced({program}));
  const ProcessResult run =
      testing::run_process(traced(dir / "e.trace", {program}, {"--cpu-sampling=1000", "--osrt-threshold=20us"}));
  EXPECT_EQ(run.out, untraced_run.out);
  EXPECT_EQ(run.status, untraced_run.status) << run.describe();
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
}

}  // namespace
}  // namespace proflaunch::e2e
