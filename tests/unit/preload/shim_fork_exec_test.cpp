// Processes: a fork child and an exec'd image each become their own section,
// linked to the one they came from; nothing recorded before fork or exec is
// lost or duplicated; _exit still ends the section cleanly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>

#include "tests/unit/preload/support/shim_run.h"

namespace proflaunch::testing {
namespace {

using format::kProcessAfterExec;
using format::kProcessForked;

std::map<uint64_t, uint64_t> calls_by_origin(const SectionContents& section) {
  std::map<uint64_t, uint64_t> counts;
  for (const ProbeCall& call : section.calls) ++counts[origin_of(call.value())];
  return counts;
}

// Every value origin*stride + 0..count-1 exactly once.
void expect_complete_origin(const SectionContents& section, uint64_t origin, uint64_t count) {
  std::set<uint64_t> seen;
  for (const ProbeCall& call : section.calls)
    if (origin_of(call.value()) == origin) {
      EXPECT_TRUE(seen.insert(call.value()).second);
    }
  EXPECT_EQ(seen.size(), count) << "origin " << origin;
  if (!seen.empty()) {
    EXPECT_EQ(*seen.begin(), origin * kOriginStride);
    EXPECT_EQ(*seen.rbegin(), origin * kOriginStride + count - 1);
  }
}

TraceContents run_and_load(const std::vector<std::string>& args, int expected_exit, pid_t* pid,
                           RunOptions options = {}) {
  TempDir parts;
  RunOptions run = traced_probe(parts.path(), args);
  run.set_env.insert(run.set_env.end(), options.set_env.begin(), options.set_env.end());
  RunningProcess process(run);
  *pid = process.pid();
  const ProcessResult result = process.wait();
  EXPECT_TRUE(result.exited_with(expected_exit)) << result.describe();
  std::string error;
  TraceContents trace = load_parts(parts.path(), &error);
  EXPECT_EQ(error, "");
  EXPECT_TRUE(trace.all_clean()) << trace.problems();
  return trace;
}

void check_fork(const std::string& mode) {
  pid_t pid = 0;
  const TraceContents trace = run_and_load({mode, "500"}, 0, &pid);
  ASSERT_EQ(trace.sections.size(), 2u);
  const auto parent_sections = trace.sections_of(static_cast<uint32_t>(pid));
  ASSERT_EQ(parent_sections.size(), 1u);
  const SectionContents& parent = *parent_sections[0];
  const SectionContents* child = nullptr;
  for (const auto& [id, section] : trace.sections)
    if (id != parent.id) child = &section;
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->process.has_value());

  // The child's section names its parent; the parent's is untouched.
  EXPECT_EQ(child->process->flags, static_cast<uint32_t>(kProcessForked));
  EXPECT_EQ(uint64_t{child->process->parent_section_id}, parent.id);  // packed: a copy
  EXPECT_EQ(child->process->ppid, static_cast<uint32_t>(pid));
  EXPECT_EQ(parent.process->flags, 0u);
  EXPECT_TRUE(child->process_info_first);

  // Before-fork records stay the parent's; the child has only its own.
  EXPECT_EQ(calls_by_origin(parent), (std::map<uint64_t, uint64_t>{{0, 500}, {2, 500}}));
  EXPECT_EQ(calls_by_origin(*child), (std::map<uint64_t, uint64_t>{{1, 500}}));
  expect_complete_origin(parent, 0, 500);
  expect_complete_origin(parent, 2, 500);
  expect_complete_origin(*child, 1, 500);

  // Definitions made before the fork are valid in the child's section too.
  ASSERT_EQ(child->apis.count(1), 1u);
  EXPECT_EQ(child->string(child->apis.at(1).name_string), "probe_event");
  // The child's thread is its own, under its own tid.
  ASSERT_FALSE(child->calls.empty());
  EXPECT_EQ(child->calls.front().tid, child->process->pid);
  EXPECT_FALSE(child->thread_name(child->process->pid).empty());

  ASSERT_TRUE(parent.end.has_value());
  EXPECT_EQ(parent.end->records_written, 1000u);
  ASSERT_TRUE(child->end.has_value()) << "child section not finished";
  EXPECT_EQ(child->end->records_written, 500u);
}

TEST(ShimFork, AForkChildRecordsIntoItsOwnSection) { check_fork("fork"); }

TEST(ShimFork, AForkChildEndingWith_exitStillFinishesItsSection) { check_fork("fork-_exit"); }

TEST(ShimFork, ForkingWhileTheWriterIsBusyNeverDeadlocks) {
  // 40 forks while two threads flood the rings: if a fork caught one of the
  // profiler's locks held, the child would hang (and the test time out).
  TempDir parts;
  RunOptions options = traced_probe(parts.path(), {"fork-storm", "40", "2"});
  options.timeout_ms = 60000;
  options.set_env.emplace_back("PROFLAUNCH_BUFFER_SIZE", "256K");
  RunningProcess process(options);
  const pid_t pid = process.pid();
  const ProcessResult result = process.wait();
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "forks done, 0 failed\n");

  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  ASSERT_EQ(trace.sections.size(), 41u);
  const auto parent = trace.sections_of(static_cast<uint32_t>(pid));
  ASSERT_EQ(parent.size(), 1u);
  for (const auto& [id, section] : trace.sections) {
    if (id == parent[0]->id) continue;
    EXPECT_EQ(uint64_t{section.process->parent_section_id}, parent[0]->id);  // packed: a copy
    // Only the child's own ten: nothing of the busy threads' rings came along.
    EXPECT_EQ(calls_by_origin(section), (std::map<uint64_t, uint64_t>{{1, 10}}));
    EXPECT_TRUE(section.end.has_value());
  }
  expect_complete_origin(*parent[0], 0, 40);
}

void check_exec(const std::string& mode) {
  pid_t pid = 0;
  const TraceContents trace = run_and_load({mode, "700"}, 0, &pid);
  const auto sections = trace.sections_of(static_cast<uint32_t>(pid));
  ASSERT_EQ(sections.size(), 2u) << "one section per image of the same pid";
  const SectionContents& before = *sections[0];
  const SectionContents& after = *sections[1];
  EXPECT_NE(before.id, after.id);
  EXPECT_EQ(after.process->flags, static_cast<uint32_t>(kProcessAfterExec));
  EXPECT_EQ(uint64_t{after.process->parent_section_id}, before.id);  // packed: a copy

  // Everything emitted right up to the exec made it out, and ended cleanly.
  EXPECT_EQ(calls_by_origin(before), (std::map<uint64_t, uint64_t>{{0, 700}}));
  expect_complete_origin(before, 0, 700);
  ASSERT_TRUE(before.end.has_value());
  EXPECT_EQ(before.end->records_written, 700u);

  EXPECT_EQ(calls_by_origin(after), (std::map<uint64_t, uint64_t>{{1, 700}}));
  ASSERT_TRUE(after.end.has_value());
  EXPECT_NE(after.string(after.process->command_line_string).find("exec-child"),
            std::string::npos);
}

TEST(ShimExec, TheExecdImageIsANewSectionOfTheSamePid) { check_exec("exec"); }

TEST(ShimExec, ExeclIsInterposedToo) { check_exec("exec-execl"); }

TEST(ShimExec, AnExecWithAnEmptyEnvironmentIsStillTraced) { check_exec("exec-clean-env"); }

TEST(ShimExec, AFailedExecContinuesInANewSection) {
  TempDir parts;
  RunningProcess process(traced_probe(parts.path(), {"exec-fail", "400"}));
  const pid_t pid = process.pid();
  const ProcessResult result = process.wait();
  ASSERT_TRUE(result.exited_with(0)) << result.describe();
  EXPECT_EQ(result.out, "exec failed as expected\n");
  std::string error;
  const TraceContents trace = load_parts(parts.path(), &error);
  ASSERT_TRUE(trace.all_clean()) << trace.problems();
  const auto sections = trace.sections_of(static_cast<uint32_t>(pid));
  ASSERT_EQ(sections.size(), 2u);
  EXPECT_EQ(calls_by_origin(*sections[0]), (std::map<uint64_t, uint64_t>{{0, 400}}));
  EXPECT_EQ(calls_by_origin(*sections[1]), (std::map<uint64_t, uint64_t>{{1, 400}}));
  EXPECT_EQ(sections[1]->process->flags, 0u);
  EXPECT_EQ(uint64_t{sections[1]->process->parent_section_id}, sections[0]->id);  // packed: a copy
  ASSERT_TRUE(sections[0]->end && sections[1]->end);
  EXPECT_EQ(sections[1]->end->records_written, 400u);
}

TEST(ShimSpawn, APosixSpawnedChildIsTracedAndKnowsItsParent) {
  // Spawned with an empty environment: the hook gives it our settings back.
  pid_t pid = 0;
  const TraceContents trace = run_and_load({"spawn", "250"}, 0, &pid);
  ASSERT_EQ(trace.sections.size(), 2u);
  const auto parent = trace.sections_of(static_cast<uint32_t>(pid));
  ASSERT_EQ(parent.size(), 1u);
  for (const auto& [id, section] : trace.sections) {
    if (id == parent[0]->id) {
      EXPECT_EQ(calls_by_origin(section), (std::map<uint64_t, uint64_t>{{0, 250}}));
      continue;
    }
    EXPECT_EQ(section.process->ppid, static_cast<uint32_t>(pid));
    EXPECT_EQ(section.process->flags, 0u);
    EXPECT_EQ(uint64_t{section.process->parent_section_id}, parent[0]->id);  // packed: a copy
    EXPECT_EQ(calls_by_origin(section), (std::map<uint64_t, uint64_t>{{1, 250}}));
  }
}

TEST(ShimExit, _exitFlushesAndEndsTheSection) {
  pid_t pid = 0;
  const TraceContents trace = run_and_load({"os-exit", "300"}, 5, &pid);
  ASSERT_EQ(trace.sections.size(), 1u);
  const SectionContents& section = trace.sections.begin()->second;
  EXPECT_EQ(section.calls.size(), 300u);
  ASSERT_TRUE(section.end.has_value());
  EXPECT_EQ(section.end->records_written, 300u);
}

}  // namespace
}  // namespace proflaunch::testing
