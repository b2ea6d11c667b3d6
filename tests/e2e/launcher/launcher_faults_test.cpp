// Faults and churn around a traced run: processes that outlive the program,
// two runs aimed at one output, forks by the hundred with some killed,
// vfork and clone3, closed and dup2ed descriptors, blocked signals, a stopped
// program, descriptors and address space run out, threads by
// the ten thousand. In each the program behaves as untraced and the trace is
// whole, or says what it lacks.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "tests/e2e/launcher/launcher_run.h"

namespace proflaunch::testing {
namespace {

using format::kProcessAfterExec;

constexpr uint64_t kOriginStride = 1000000;  // probe_app: value = origin * stride + sequence

// Calls per origin, over the whole trace.
std::map<uint64_t, uint64_t> calls_by_origin(const TraceContents& trace) {
  std::map<uint64_t, uint64_t> counts;
  for (const auto& [id, section] : trace.sections)
    for (const ProbeCall& call : section.calls) ++counts[call.value() / kOriginStride];
  return counts;
}

// Whether `pid` has exited (gone, or a zombie nobody reaped yet).
bool process_gone(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  const std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

bool wait_until_gone(pid_t pid, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (process_gone(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return process_gone(pid);
}

pid_t pid_after(const std::string& text, const std::string& prefix) {
  const size_t at = text.find(prefix);
  return at == std::string::npos ? 0 : static_cast<pid_t>(std::stol(text.substr(at + prefix.size())));
}

// The traced program's pid, from the name of its part (once it has flushed).
pid_t program_pid(const std::string& parts_dir) {
  for (int i = 0; i < 200; ++i) {
    const auto parts = list_files(parts_dir, ".part");
    if (!parts.empty()) {
      const std::string name = parts[0].substr(parts[0].rfind('/') + 1);
      return static_cast<pid_t>(std::stol(name.substr(0, name.find('-'))));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// The trace holds one section, whole: `calls` events, its end, no drop.
void expect_one_whole_section(const std::string& output, uint64_t calls) {
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_EQ(section.calls.size(), calls);
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_dropped, 0u);
}

ProcessResult join(const std::string& output, bool force) {
  RunOptions options;
  options.argv = {launcher_path(), "--join", output};
  if (force) options.argv.push_back("--force");
  return run_process(options);
}

TEST(LauncherDaemons, ADaemonThatEndsWithinTheWaitIsInTheTrace) {
  TempDir dir;
  const std::string output = dir / "daemon.trace";
  const ProcessResult result = run_process(launcher_options({"-o", output}, probe({"daemon", "700", "100"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  const pid_t daemon = pid_after(result.out, "daemon ");
  ASSERT_GT(daemon, 0) << result.out;
  EXPECT_TRUE(process_gone(daemon)) << "the launcher returns once the daemon has ended";
  EXPECT_FALSE(file_exists(output + ".parts"));

  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  const auto counts = calls_by_origin(trace);
  EXPECT_EQ(counts.count(0) ? counts.at(0) : 0, 100u) << "the program's events";
  EXPECT_EQ(counts.count(1) ? counts.at(1) : 0, 100u) << "the daemon's events, recorded after the program exited";
  const auto sections = trace.sections_of(static_cast<uint32_t>(daemon));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_TRUE(sections[0]->end.has_value());
}

TEST(LauncherDaemons, ADaemonThatOutlivesTheWaitKeepsItsPartsForALaterJoin) {
  TempDir dir;
  const std::string output = dir / "late.trace";
  const ProcessResult result = run_process(
      launcher_options({"-o", output, "--wait-after-exit", "0"}, probe({"daemon", "1500", "100"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  const pid_t daemon = pid_after(result.out, "daemon ");
  ASSERT_GT(daemon, 0) << result.out;
  EXPECT_NE(result.err.find("1 traced process still running (pid " + std::to_string(daemon) + ")"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("--join"), std::string::npos) << result.err;
  ASSERT_TRUE(file_exists(output + ".parts")) << "the parts stay while a writer runs";
  {
    const TraceContents early = load_file(output);
    ASSERT_TRUE(early.all_clean()) << early.problems();
    const auto counts = calls_by_origin(early);
    EXPECT_EQ(counts.count(0) ? counts.at(0) : 0, 100u) << "what was written is there now";
    EXPECT_EQ(counts.count(1), 0u) << "the daemon has not recorded yet";
  }

  ASSERT_TRUE(wait_until_gone(daemon, 15000));
  const ProcessResult joined = join(output, /*force=*/true);
  ASSERT_TRUE(joined.exited_with(0)) << joined.describe();
  EXPECT_EQ(joined.err.find("still running"), std::string::npos) << joined.err;
  EXPECT_FALSE(file_exists(output + ".parts"));
  const TraceContents whole = load_file(output);
  ASSERT_TRUE(whole.all_clean()) << whole.problems();
  const auto counts = calls_by_origin(whole);
  EXPECT_EQ(counts.count(0) ? counts.at(0) : 0, 100u) << "the first join kept every part";
  EXPECT_EQ(counts.count(1) ? counts.at(1) : 0, 100u);
}

TEST(LauncherExclusive, ASecondRunOrAJoinIsRefusedWhileTheFirstRuns) {
  TempDir dir;
  const std::string output = dir / "busy.trace";
  RunningProcess first(launcher_options({"-o", output}, probe({"loop", "30"})));
  ASSERT_TRUE(first.wait_for_line("ready", 10000));

  // --force discards stale parts, never those of a run that is going on.
  const ProcessResult second = run_process(launcher_options({"-o", output, "--force"}, probe({"emit", "10"})));
  EXPECT_TRUE(second.exited_with(1)) << second.describe();
  EXPECT_NE(second.err.find("another proflaunch (pid " + std::to_string(first.pid()) + ")"), std::string::npos)
      << second.err;
  EXPECT_EQ(second.out, "") << "the second program never ran";
  const ProcessResult early_join = join(output, /*force=*/true);
  EXPECT_TRUE(early_join.exited_with(1)) << early_join.describe();
  EXPECT_NE(early_join.err.find("has not ended"), std::string::npos) << early_join.err;
  EXPECT_FALSE(file_exists(output));

  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a flush or two
  first.send(SIGTERM);  // forwarded: the loop has no handler and dies of it
  const ProcessResult ended = first.wait();
  EXPECT_TRUE(ended.exited_with(128 + SIGTERM)) << ended.describe();
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  ASSERT_GE(section.calls.size(), 30u);
  for (size_t i = 0; i < section.calls.size(); ++i) ASSERT_EQ(section.calls[i].value(), i) << "nothing discarded";
}

TEST(LauncherExclusive, RunsStartedAtOnceWithACounterEachGetTheirOwnFile) {
  TempDir dir;
  constexpr int kRuns = 4;
  std::vector<std::unique_ptr<RunningProcess>> runs;
  for (int i = 0; i < kRuns; ++i)
    runs.push_back(std::make_unique<RunningProcess>(
        launcher_options({"-o", dir / "run%n.trace"}, probe({"emit", std::to_string(1000 + i)}))));
  for (auto& run : runs) {
    const ProcessResult result = run->wait();
    EXPECT_TRUE(result.exited_with(0)) << result.describe();
  }
  std::set<uint64_t> event_counts;
  for (int n = 1; n <= kRuns; ++n) {
    const std::string output = dir / ("run" + std::to_string(n) + ".trace");
    ASSERT_TRUE(file_exists(output)) << output;
    EXPECT_FALSE(file_exists(output + ".parts"));
    const TraceContents trace = load_file(output);
    ASSERT_TRUE(trace.all_clean()) << trace.problems();
    EXPECT_EQ(trace.sections.size(), 1u) << "one program per file";
    event_counts.insert(trace.total_calls());
  }
  EXPECT_EQ(event_counts, (std::set<uint64_t>{1000, 1001, 1002, 1003})) << "every run in a file of its own";
}

TEST(LauncherChurn, FiveHundredForksWithSomeChildrenKilledLeaveAWholeTrace) {
  TempDir dir;
  const std::string output = dir / "forks.trace";
  constexpr uint64_t kForks = 500, kKillEvery = 5;
  const ProcessResult result = run_process(launcher_options(
      {"-o", output, "--flush-interval", "20"}, probe({"fork-kill", std::to_string(kForks), std::to_string(kKillEvery)})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_NE(result.out.find(std::to_string(kForks) + " children, 0 unexpected"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find(std::to_string(kForks + 1) + " processes"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find(std::to_string(kForks / kKillEvery) + " ended abruptly"), std::string::npos) << result.err;

  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), kForks + 1);
  uint64_t ended = 0;
  for (const auto& [id, section] : trace.sections) ended += section.end ? 1 : 0;
  EXPECT_EQ(ended, kForks + 1 - kForks / kKillEvery) << "only the killed children lack an end";
  const auto counts = calls_by_origin(trace);
  EXPECT_EQ(counts.at(0), kForks) << "the parent's events";
  for (uint64_t f = 0; f < kForks; ++f)
    ASSERT_EQ(counts.count(1 + f) ? counts.at(1 + f) : 0, 10u) << "child " << f << ", killed ones included";
}

std::set<uint64_t> origins_of(const SectionContents& section) {
  std::set<uint64_t> found;
  for (const ProbeCall& call : section.calls) found.insert(call.value() / kOriginStride);
  return found;
}

// A parent that records 0s and 2s around starting a child image that
// records 1s, from a child the shim was not told about (vfork, raw clone3):
// the image is a new process spawned from the parent's section.
void expect_spawned_image(const std::string& mode) {
  TempDir dir;
  const std::string output = dir / "spawned.trace";
  const ProcessResult result = run_process(launcher_options({"-o", output}, probe({mode, "100"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 2u);
  const SectionContents* parent = nullptr;
  const SectionContents* child = nullptr;
  for (const auto& [id, section] : trace.sections) {
    ASSERT_TRUE(section.process.has_value());
    EXPECT_TRUE(section.end.has_value());
    (section.process->parent_section_id == 0 ? parent : child) = &section;
  }
  ASSERT_NE(parent, nullptr);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(origins_of(*parent), (std::set<uint64_t>{0, 2})) << "the parent, before and after";
  EXPECT_EQ(parent->calls.size(), 200u) << "the child did not end the parent's section";
  EXPECT_EQ(origins_of(*child), (std::set<uint64_t>{1}));
  EXPECT_EQ(child->calls.size(), 100u);
  EXPECT_NE(child->process->pid, parent->process->pid);
  EXPECT_EQ(uint64_t{child->process->parent_section_id}, parent->id);
  EXPECT_EQ(child->process->flags & kProcessAfterExec, 0u);
}

TEST(LauncherChurn, AVforkChildThatExecsIsTracedAndItsParentGoesOn) {
#if defined(__SANITIZE_THREAD__)
  // TSan's vfork interceptor calls fork: the child is a forked process with a
  // section of its own (the fork tests), not a vfork child the shim is not told of.
  GTEST_SKIP() << "under ThreadSanitizer vfork is fork";
#endif
  expect_spawned_image("vfork-exec");
}

TEST(LauncherChurn, ARawClone3ChildThatExecsIsTracedAndItsParentGoesOn) { expect_spawned_image("clone3-exec"); }

TEST(LauncherChurn, AChildThatClosesEveryDescriptorBeforeExecIsTraced) {
  TempDir dir;
  const std::string output = dir / "closefrom.trace";
  const ProcessResult result = run_process(launcher_options({"-o", output}, probe({"closefrom-exec", "100"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 3u) << "parent, fork child, its exec'd image";
  std::map<std::set<uint64_t>, const SectionContents*> by_origins;
  for (const auto& [id, section] : trace.sections) {
    ASSERT_TRUE(section.process.has_value());
    EXPECT_TRUE(section.end.has_value());
    by_origins[origins_of(section)] = &section;
  }
  const SectionContents* parent = by_origins[{0, 2}];
  const SectionContents* forked = by_origins[{3}];
  const SectionContents* image = by_origins[{1}];
  ASSERT_TRUE(parent && forked && image);
  EXPECT_EQ(parent->calls.size(), 200u);
  EXPECT_EQ(forked->calls.size(), 10u) << "written before the exec, descriptors closed or not";
  EXPECT_EQ(image->calls.size(), 100u);
  EXPECT_TRUE(image->process->flags & kProcessAfterExec);
  EXPECT_EQ(image->process->pid, forked->process->pid);
}

TEST(LauncherChurn, DescriptorsDup2edOverByTheProgramAreNotOurs) {
  TempDir dir;
  const std::string output = dir / "dup2.trace";
  const ProcessResult result = run_process(launcher_options({"-o", output}, probe({"dup2-high", "1000"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "dup2 done\n");
  expect_one_whole_section(output, 2000);
}

TEST(LauncherChurn, AProgramWithEverySignalBlockedIsTracedWhole) {
  TempDir dir;
  const std::string output = dir / "blocked.trace";
  const ProcessResult result = run_process(launcher_options({"-o", output}, probe({"block-signals", "3000"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "blocked\n");
  expect_one_whole_section(output, 3000);
}

TEST(LauncherChurn, AProgramStoppedAndContinuedLosesNothing) {
  TempDir dir;
  const std::string output = dir / "stopped.trace";
  RunningProcess launcher(launcher_options({"-o", output}, probe({"loop", "30"})));
  ASSERT_TRUE(launcher.wait_for_line("ready", 10000));
  const pid_t program = program_pid(output + ".parts");
  ASSERT_GT(program, 0);
  ASSERT_EQ(kill(program, SIGSTOP), 0);  // the writer thread stops with it
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(kill(program, SIGCONT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  launcher.send(SIGINT);
  const ProcessResult ended = launcher.wait();
  EXPECT_TRUE(ended.exited_with(128 + SIGINT)) << ended.describe();

  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  ASSERT_GE(section.calls.size(), 30u);
  for (size_t i = 0; i < section.calls.size(); ++i) ASSERT_EQ(section.calls[i].value(), i) << "no gap";
}

TEST(LauncherChurn, OutOfDescriptorsEveryEventIsInTheTraceOrCountedLost) {
  TempDir dir;
  const std::string output = dir / "nofile.trace";
  const ProcessResult result = run_process(
      launcher_options({"-o", output, "--flush-interval", "20"}, probe({"exhaust-fds", "2000"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "exhausted: EMFILE\n");
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_EQ(section.calls.size() + section.lost_count(), 4000u) << "every event is there or counted";
  EXPECT_GT(section.lost_count(), 0u) << "flushes while the descriptors were out could not write";
  EXPECT_NE(result.err.find("Too many open files"), std::string::npos) << result.err;
  const auto counts = calls_by_origin(trace);
  EXPECT_EQ(counts.count(1) ? counts.at(1) : 0, 2000u) << "recording goes on once descriptors are back";
  EXPECT_TRUE(section.end.has_value());
}

TEST(LauncherChurn, OutOfAddressSpaceEveryEventIsInTheTraceOrCountedLost) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory does not fit under RLIMIT_AS";
#endif
  TempDir dir;
  const std::string output = dir / "nomemory.trace";
  const ProcessResult result = run_process(
      launcher_options({"-o", output, "--flush-interval", "20"}, probe({"exhaust-memory", "2000"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "exhausted: yes\n");
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_EQ(section.calls.size() + section.lost_count(), 1u + 4000u) << "every event is there or counted";
  const auto counts = calls_by_origin(trace);
  EXPECT_EQ(counts.count(1) ? counts.at(1) : 0, 2000u) << "recording goes on once memory is back";
  EXPECT_TRUE(section.end.has_value());
}

// probe_app block-signals 3000 (about 300 ms of recording) with write
// errors injected under the shim (tests/e2e/launcher/write_faults.c).
ProcessResult run_with_write_fault(const std::string& output, const std::string& fault) {
  RunOptions options = launcher_options({"-o", output, "--flush-interval", "20"}, probe({"block-signals", "3000"}));
  // In a sanitizer build the launcher itself needs the runtime first.
  const char* runtime = std::getenv("SANITIZER_PRELOAD");
  options.set_env.emplace_back("LD_PRELOAD", (runtime != nullptr && *runtime != '\0' ? std::string(runtime) + ":" : "") +
                                                 required_env("WRITE_FAULTS"));
  options.set_env.emplace_back("PROBE_WRITE_FAULT", fault);
  return run_process(options);
}

TEST(LauncherWriteErrors, ShortWritesLoseNothing) {
  TempDir dir;
  const std::string output = dir / "short.trace";
  const ProcessResult result = run_with_write_fault(output, "short");
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "blocked\n");
  expect_one_whole_section(output, 3000);
}

TEST(LauncherWriteErrors, AnEioMidRunIsCountedByTheLastAttemptAtExit) {
  TempDir dir;
  const std::string output = dir / "eio.trace";
  // One write fails once the part holds 2000 bytes: recording stops there,
  // and the last attempt at exit writes the count and the end.
  const ProcessResult result = run_with_write_fault(output, "eio:2000:1");
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "blocked\n") << "the program's output is its own";
  EXPECT_NE(result.err.find("Input/output error"), std::string::npos) << result.err;
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_GT(section.lost_count(), 0u);
  EXPECT_GT(section.calls.size(), 0u) << "what came before the error is kept";
  EXPECT_EQ(section.calls.size() + section.lost_count(), 3000u) << "every event is there or counted";
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_dropped, section.lost_count());
}

TEST(LauncherWriteErrors, ADiskThatStaysFullIsReportedWithWhatWasLost) {
  TempDir dir;
  const std::string output = dir / "enospc.trace";
  const ProcessResult result = run_with_write_fault(output, "enospc:2000:0");
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "blocked\n");
  EXPECT_NE(result.err.find("No space left on device"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("events after the failed write are not in the trace"), std::string::npos)
      << result.err;
  const TraceContents trace = load_file(output);
  ASSERT_TRUE(trace.all_clean()) << "cut back to its last whole chunk: " << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_LT(section.calls.size(), 3000u);
  EXPECT_FALSE(section.end.has_value()) << "no room for it";
  EXPECT_NE(result.err.find("1 ended abruptly"), std::string::npos) << result.err;
}

TEST(LauncherChurn, TenThousandThreadsComeAndGo) {
  TempDir dir;
  const std::string output = dir / "threads.trace";
  const ProcessResult result = run_process(launcher_options({"-o", output}, probe({"thread-churn", "10000", "5"})));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  unsigned long vm_kib = 0;
  ASSERT_EQ(std::sscanf(result.out.c_str(), "VmSize: %lu kB", &vm_kib), 1) << result.out;
  RunOptions untraced;
  untraced.argv = probe({"thread-churn", "10000", "5"});
  const ProcessResult plain = run_process(untraced);
  unsigned long plain_vm_kib = 0;
  ASSERT_EQ(std::sscanf(plain.out.c_str(), "VmSize: %lu kB", &plain_vm_kib), 1) << plain.out;
  EXPECT_LT(vm_kib, plain_vm_kib + 1024ul * 1024ul) << "the buffers of ended threads are released";

  expect_one_whole_section(output, 50000);
}

}  // namespace
}  // namespace proflaunch::testing
