// The shim end to end through the probe: threads (including ones that exit
// early and ones that rename themselves), the section's bookkeeping, and the
// program's own behaviour left untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <set>

#include "tests/unit/preload/support/shim_run.h"

namespace proflaunch::testing {
namespace {

TEST(ShimThreads, EveryThreadsEventsArriveInOrderUnderItsOwnTidAndName) {
  TempDir parts;
  RunningProcess process(traced_probe(parts.path(), {"threads", "6", "3000"}));
  const pid_t pid = process.pid();
  const ProcessResult result = process.wait();
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.err, "");

  const auto files = list_files(parts.path(), ".part");
  ASSERT_EQ(files.size(), 1u);
  std::string error;
  const TraceContents trace = load_trace(files, &error);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;

  ASSERT_TRUE(section.process.has_value());
  EXPECT_TRUE(section.process_info_first);
  EXPECT_EQ(section.process->pid, static_cast<uint32_t>(pid));
  EXPECT_EQ(section.process->ppid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(section.process->flags, 0u);
  EXPECT_NE(section.string(section.process->command_line_string).find("threads"),
            std::string::npos);
  EXPECT_EQ(section.events_before_thread_batch, 0u);
  ASSERT_EQ(section.apis.count(1), 1u);
  EXPECT_EQ(section.string(section.apis.at(1).name_string), "probe_event");

  // Per origin (thread): all 3000 values, in order, from one tid.
  std::map<uint64_t, std::vector<uint64_t>> values_by_origin;
  std::map<uint64_t, std::set<uint32_t>> tids_by_origin;
  for (const ProbeCall& call : section.calls) {
    values_by_origin[origin_of(call.value())].push_back(call.value() % kOriginStride);
    tids_by_origin[origin_of(call.value())].insert(call.tid);
    EXPECT_LE(call.record.span.begin_ns, call.record.span.end_ns);
    EXPECT_EQ(call.record.span.api, 1);
  }
  ASSERT_EQ(values_by_origin.size(), 7u);
  std::set<uint32_t> all_tids;
  for (const auto& [origin, values] : values_by_origin) {
    ASSERT_EQ(values.size(), 3000u) << "origin " << origin;
    for (uint64_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], i) << "origin " << origin;
    ASSERT_EQ(tids_by_origin[origin].size(), 1u);
    all_tids.insert(*tids_by_origin[origin].begin());
  }
  EXPECT_EQ(all_tids.size(), 7u);
  EXPECT_EQ(*tids_by_origin[0].begin(), static_cast<uint32_t>(pid));  // main thread

  // Names: odd threads named themselves before recording, even ones after
  // their first record (so they carry the inherited name first, then the new).
  for (uint64_t origin = 1; origin <= 6; ++origin) {
    const uint32_t tid = *tids_by_origin[origin].begin();
    const std::string name = "probe-" + std::to_string(origin);
    if (origin % 2 == 1)
      EXPECT_EQ(section.thread_names(tid), (std::vector<std::string>{name}));
    else
      EXPECT_EQ(section.thread_names(tid),
                (std::vector<std::string>{"probe_app", name + "-late"}));
  }

  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_written, 7u * 3000u);
  EXPECT_EQ(section.end->records_dropped, 0u);
  EXPECT_TRUE(section.lost.empty());
}

TEST(ShimThreads, BuffersOfExitedThreadsAreFreed) {
  // 400 threads, each with an 8 MiB ring: kept, they would add 3.2 GB of
  // address space; freed after their last records are written, a few rings.
  TempDir parts;
  const ProcessResult result = run_process(traced_probe(parts.path(), {"thread-churn", "400", "50"}));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  unsigned long vm_kib = 0;
  ASSERT_EQ(std::sscanf(result.out.c_str(), "VmSize: %lu kB", &vm_kib), 1) << result.out;
  // Against the same program untraced (an ASan build maps terabytes of shadow).
  const ProcessResult plain = run_process(untraced_probe({"thread-churn", "400", "50"}));
  ASSERT_TRUE(plain.exited_with(0)) << plain.describe();
  unsigned long plain_vm_kib = 0;
  ASSERT_EQ(std::sscanf(plain.out.c_str(), "VmSize: %lu kB", &plain_vm_kib), 1) << plain.out;
  EXPECT_LT(vm_kib, plain_vm_kib + 1024ul * 1024ul) << "thread buffers are not released";

  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_EQ(section.calls.size(), 400u * 50u);
  std::set<uint32_t> tids;
  for (const auto& call : section.calls) tids.insert(call.tid);
  EXPECT_GE(tids.size(), 2u);
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_dropped, 0u);
}

TEST(ShimThreads, AProcessThatRecordsNothingLeavesNoPart) {
  TempDir parts;
  const ProcessResult result = run_process(traced_probe(parts.path(), {"emit", "0"}));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_TRUE(list_files(parts.path(), "").empty());
}

TEST(ShimThreads, OutputAndExitCodeAreThoseOfAnUntracedRun) {
  TempDir parts;
  const std::vector<std::string> args = {"output", "30000", "3"};
  const ProcessResult plain = run_process(untraced_probe(args));
  const ProcessResult traced = run_process(traced_probe(parts.path(), args));
  ASSERT_TRUE(plain.exited_with(3)) << plain.describe();
  EXPECT_EQ(traced.status, plain.status);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, plain.err);
  std::string error;
  EXPECT_EQ(load_parts(parts.path(), &error).total_calls(), 30000u);  // and it was traced
}

TEST(ShimThreads, VerboseAddsOneLineAndNothingElse) {
  TempDir parts;
  const std::vector<std::string> args = {"output", "3000", "0"};
  const ProcessResult plain = run_process(untraced_probe(args));
  RunOptions options = traced_probe(parts.path(), args);
  options.set_env.emplace_back("PROFLAUNCH_VERBOSE", "1");
  const ProcessResult traced = run_process(options);
  EXPECT_EQ(traced.status, plain.status);
  EXPECT_EQ(traced.out, plain.out);
  ASSERT_GT(traced.err.size(), plain.err.size());
  // The program's lines, then exactly one of ours at exit.
  EXPECT_EQ(traced.err.substr(0, plain.err.size()), plain.err);
  const std::string ours = traced.err.substr(plain.err.size());
  EXPECT_EQ(ours.rfind("proflaunch: pid ", 0), 0u) << ours;
  EXPECT_NE(ours.find("3000 records written, 0 dropped"), std::string::npos) << ours;
  EXPECT_EQ(std::count(ours.begin(), ours.end(), '\n'), 1);
}

// Enough records for many chunks: a record that does not fit in a full chunk
// stays in its ring for the next one and must be taken as it was (it was
// once converted from ticks to ns twice, and landed hours before the start).
TEST(ShimThreads, TimesRunForwardAcrossManyChunks) {
  TempDir parts;
  const ProcessResult result = run_process(traced_probe(parts.path(), {"threads", "2", "100000"}));
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  std::string error;
  const TraceContents trace = load_trace(list_files(parts.path(), ".part"), &error);
  ASSERT_EQ(error, "");
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  ASSERT_TRUE(section.process.has_value());
  EXPECT_GT(section.events_chunks, 3u);
  EXPECT_EQ(section.calls.size() + section.lost_count(), 3u * 100000u);

  const uint64_t section_start_ns = section.process->monotonic_ns;  // a packed field: copied
  std::map<uint32_t, uint64_t> previous_by_tid;
  for (const ProbeCall& call : section.calls) {
    auto [it, first] = previous_by_tid.try_emplace(call.tid, section_start_ns);
    ASSERT_GE(call.record.span.begin_ns, it->second) << "tid " << call.tid << " value " << call.value();
    it->second = call.record.span.begin_ns;
  }
}

}  // namespace
}  // namespace proflaunch::testing
