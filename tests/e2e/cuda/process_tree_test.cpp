// Fork and exec: forked and exec'd children each appear as their own process
// image in the one output file, with their own launches, linked to their
// parent (ppid, parent section, fork/exec flags).
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

constexpr char kRelu[] = "ReluFunctor";  // the kernel of the programs' small workload

CudaTrace run_tree(const TempDir& dir, const std::vector<std::string>& program) {
  // Without CPU samples a process that makes no GPU call leaves no part.
  const ProcessResult run = testing::run_process(traced(dir / "x.trace", program, {"--cpu-sampling=off"}));
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  EXPECT_NE(access((dir / "x.trace.parts").c_str(), F_OK), 0) << "the parts were not joined";
  CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  EXPECT_TRUE(trace.report.clean()) << format::summarize(trace.report);
  return trace;
}

// Each process image of the small workload: its launches, two copies, and a
// clean end (SectionEnd: the children's exit, even _exit, finished it).
// Every operation has its GPU time from CUPTI (the default where it works):
// a child that starts CUDA after the fork starts CUPTI of its own, and its
// records reach the file even when it leaves by _exit.
void expect_small_workload(const ProcessImage& image, int launches) {
  EXPECT_EQ(image.launch_count(kRelu), launches) << image.command_line();
  EXPECT_EQ(image.launches().size(), static_cast<size_t>(launches)) << image.command_line();
  EXPECT_EQ(image.copies().size(), 2u) << image.command_line();
  EXPECT_TRUE(image.end.has_value()) << image.command_line();
  for (const Operation& op : image.operations) {
    ASSERT_EQ(op.gpu.size(), 1u) << op.api << " in " << image.command_line();
    EXPECT_EQ(op.gpu.front().source, uint8_t(format::GpuTimingSource::kCupti)) << op.api;
  }
  EXPECT_TRUE(image.lost.empty()) << image.command_line();
}

void check_forked_workers(const std::string& child_exit) {
  TempDir dir;
  const int children = 2, launches = 3;
  const CudaTrace trace =
      run_tree(dir, {build_path("FORK_GPU"), "--children", std::to_string(children), "--launches",
                     std::to_string(launches), "--child-exit", child_exit});
  ASSERT_EQ(trace.images.size(), static_cast<size_t>(children + 1)) << describe(trace);
  const ProcessImage* parent = nullptr;
  for (const ProcessImage& image : trace.images)
    if (image.info && image.info->flags == 0) parent = &image;
  ASSERT_NE(parent, nullptr) << describe(trace);
  expect_small_workload(*parent, launches);
  std::set<uint32_t> child_pids;
  for (const ProcessImage& image : trace.images) {
    if (&image == parent) continue;
    ASSERT_TRUE(image.info.has_value());
    EXPECT_EQ(image.info->flags, static_cast<uint32_t>(format::kProcessForked));
    EXPECT_EQ(image.ppid(), parent->pid());
    EXPECT_EQ(uint64_t{image.info->parent_section_id}, parent->section_id);  // (a packed field: copied)
    EXPECT_NE(image.pid(), parent->pid());
    child_pids.insert(image.pid());
    expect_small_workload(image, launches);
  }
  EXPECT_EQ(child_pids.size(), static_cast<size_t>(children));
}

TEST(ProcessTree, ForkedWorkersAreProcessesOfTheirOwn) { check_forked_workers("exit"); }

// Four threads end the process at once, by exit() and by _exit(): glibc lets
// one run the handlers and destructors (the shim's flush) while another ends
// the process as soon as none is left. Before the shim made a second exiting
// thread finish the trace (or wait for the one finishing it), 9 runs in 12
// lost data, 7 of them the whole process. Five runs each.
void check_threads_exiting_at_once(const std::vector<std::string>& extra) {
  const int threads = 4;
  for (int run_index = 0; run_index < 5; ++run_index) {
    TempDir dir;
    std::vector<std::string> program = {build_path("CONCURRENT_EXIT"), "--threads", std::to_string(threads)};
    program.insert(program.end(), extra.begin(), extra.end());
    const ProcessResult run = testing::run_process(traced(dir / "x.trace", program));
    ASSERT_TRUE(run.exited_with(3)) << run.describe();
    const CudaTrace trace = load_trace_or_fail(dir / "x.trace");
    ASSERT_EQ(trace.images.size(), 1u) << "run " << run_index << ": " << describe(trace);
    const ProcessImage& image = trace.images.front();
    EXPECT_TRUE(image.end.has_value()) << "run " << run_index << ": no SectionEnd";
    EXPECT_EQ(image.sets().size(), static_cast<size_t>(threads)) << "run " << run_index;
    size_t allocations = 0;
    for (const format::MemoryOperationRecord& m : image.memory)
      if (m.action == static_cast<uint8_t>(format::MemoryAction::kAcquire)) ++allocations;
    EXPECT_EQ(allocations, static_cast<size_t>(threads)) << "run " << run_index;
  }
}

TEST(ProcessTree, ThreadsCallingExitAtOnceKeepTheTrace) { check_threads_exiting_at_once({}); }
TEST(ProcessTree, ThreadsCallingUnderscoreExitAtOnceKeepTheTrace) {
  check_threads_exiting_at_once({"--underscore"});
}

TEST(ProcessTree, ForkedWorkersEndingWithUnderscoreExit) { check_forked_workers("_exit"); }

// The parent times with CUPTI, forks CPU-only workers (CUDA cannot be used
// after a fork), and goes on with CUPTI: its operations after the fork are
// timed as before it, and the workers' images are there, with no GPU work.
TEST(ProcessTree, ForkingWorkersDoesNotStopTheParentsCupti) {
  TempDir dir;
  const CudaTrace trace = run_tree(dir, {build_path("FORK_GPU"), "--mode", "parent-first", "--children", "2",
                                         "--launches", "3"});
  ASSERT_EQ(trace.images.size(), 3u) << describe(trace);
  const ProcessImage* parent = nullptr;
  for (const ProcessImage& image : trace.images)
    if (image.info && image.info->flags == 0) parent = &image;
  ASSERT_NE(parent, nullptr) << describe(trace);
  ASSERT_GE(parent->launches().size(), 6u) << "before and after the fork";
  for (const Operation& op : parent->operations) {
    ASSERT_EQ(op.gpu.size(), 1u) << op.api;
    EXPECT_EQ(op.gpu.front().source, uint8_t(format::GpuTimingSource::kCupti)) << op.api;
  }
  EXPECT_TRUE(parent->lost.empty());
  EXPECT_TRUE(parent->unattributed.empty());
  for (const ProcessImage& image : trace.images) {
    if (&image == parent) continue;
    EXPECT_TRUE(image.operations.empty()) << image.command_line();
    EXPECT_TRUE(image.end.has_value());
  }
}

TEST(ProcessTree, ExecInPlaceIsANewImageOfTheSamePid) {
  TempDir dir;
  const CudaTrace trace = run_tree(dir, {build_path("EXEC_GPU"), "--mode", "replace", "--launches", "2"});
  ASSERT_EQ(trace.images.size(), 2u) << describe(trace);
  const ProcessImage& before = trace.images[0];
  const ProcessImage& after = trace.images[1];
  EXPECT_EQ(before.pid(), after.pid());
  EXPECT_NE(before.command_line().find("exec_gpu"), std::string::npos);
  EXPECT_NE(after.command_line().find("gpu_child"), std::string::npos);
  ASSERT_TRUE(after.info.has_value());
  EXPECT_EQ(after.info->flags, static_cast<uint32_t>(format::kProcessAfterExec));
  EXPECT_EQ(uint64_t{after.info->parent_section_id}, before.section_id);
  expect_small_workload(before, 2);
  expect_small_workload(after, 2);
}

TEST(ProcessTree, ForkThenExecIsAChildProcess) {
  TempDir dir;
  const CudaTrace trace = run_tree(dir, {build_path("EXEC_GPU"), "--mode", "fork-exec", "--launches", "2"});
  ASSERT_EQ(trace.images.size(), 2u) << describe(trace);
  const ProcessImage& parent = trace.images[0];
  const ProcessImage& child = trace.images[1];
  EXPECT_NE(parent.command_line().find("exec_gpu"), std::string::npos);
  EXPECT_NE(child.command_line().find("gpu_child"), std::string::npos);
  EXPECT_NE(child.pid(), parent.pid());
  EXPECT_EQ(child.ppid(), parent.pid());
  ASSERT_TRUE(child.info.has_value());
  EXPECT_TRUE(child.info->flags & format::kProcessAfterExec);
  // The image that exec'd is the forked copy of the parent, which recorded
  // nothing and so has no section in the file; its link is still set.
  EXPECT_NE(uint64_t{child.info->parent_section_id}, 0u);
  // The parent's workload before the fork and after the child ended.
  EXPECT_EQ(parent.launch_count(kRelu), 4);
  EXPECT_EQ(parent.copies().size(), 4u);
  expect_small_workload(child, 2);
}

}  // namespace
}  // namespace proflaunch::e2e
