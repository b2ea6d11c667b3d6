// Threads and streams: in the multi-threaded program every worker thread has
// its own ThreadInfo with its name and its own operations; work on two
// streams really overlaps on the GPU timeline, and work on one stream never
// does. The JSON gives each worker its own named track.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/e2e/cuda/support/perfetto_json.h"
#include "tests/e2e/cuda/support/traced_run.h"

namespace proflaunch::e2e {
namespace {

// GPU timestamps come from float milliseconds (cuEventElapsedTime): a few
// tens of ns of rounding between two operations that follow each other. Two
// operations measured from different clock anchors (a new one each second,
// preload/cuda/gpu_clock.h) also differ by the anchors' error: under ASan on
// a loaded machine, 2 us was seen, and 18.7 us in a CI run (two tests at once
// on 2 cores). The kernels here last 1 ms: work really overlapping on one
// stream would overlap by ten times this slack.
constexpr uint64_t kTimestampSlackNs = 100000;

constexpr int kThreads = 3;
constexpr int kIterations = 3;

struct Interval {
  uint64_t start_ns, end_ns;
  const Operation* op;
};

class ThreadsAndStreams : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    // Kernels long enough (1 ms) that the workers' kernels are in flight
    // together; each worker runs (i + 1) * iterations rounds.
    const ProcessResult run = testing::run_process(
        traced(*dir_ / "x.trace",
               {build_path("MULTI_STREAM_THREADS"), "--threads", std::to_string(kThreads),
                "--iterations", std::to_string(kIterations), "--elements", "4096"},
               {}, {{"SIMGPU_KERNEL_COSTS", "*=1ms"}}));
    ASSERT_TRUE(run.exited_with(0)) << run.describe();
    trace_ = new CudaTrace(load_trace_or_fail(*dir_ / "x.trace"));
  }
  static void TearDownTestSuite() {
    delete trace_;
    delete dir_;
  }
  const ProcessImage& image() {
    EXPECT_EQ(trace_->images.size(), 1u);
    return trace_->images.front();
  }

  static TempDir* dir_;
  static CudaTrace* trace_;
};
TempDir* ThreadsAndStreams::dir_;
CudaTrace* ThreadsAndStreams::trace_;

TEST_F(ThreadsAndStreams, EachWorkerThreadIsNamedAndOwnsItsWork) {
  ASSERT_FALSE(HasFatalFailure());
  const ProcessImage& img = image();
  std::map<std::string, uint32_t> tid_of_worker;
  std::map<uint32_t, int> launches_by_tid;
  std::map<uint32_t, std::set<uint64_t>> streams_by_tid;
  for (const Operation* launch : img.launches()) {
    ++launches_by_tid[launch->tid];
    streams_by_tid[launch->tid].insert(launch->stream);
  }
  for (const auto& [tid, count] : launches_by_tid) {
    const std::string name = img.thread_name(tid);
    ASSERT_EQ(name.rfind("worker-", 0), 0u) << "launching thread " << tid << " is named '" << name << "'";
    EXPECT_TRUE(tid_of_worker.emplace(name, tid).second) << name << " on two threads";
    const int index = std::stoi(name.substr(7));
    EXPECT_EQ(count, 2 * (index + 1) * kIterations) << name;  // fill + add per round
    EXPECT_EQ(streams_by_tid[tid].size(), 1u) << name << " has one stream of its own";
  }
  EXPECT_EQ(tid_of_worker.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(launches_by_tid.count(img.pid()), 0u) << "the main thread launches nothing";
  std::set<uint64_t> all_streams;
  for (const auto& [tid, streams] : streams_by_tid) all_streams.insert(streams.begin(), streams.end());
  EXPECT_EQ(all_streams.size(), static_cast<size_t>(kThreads));
}

std::map<uint64_t, std::vector<Interval>> kernel_intervals_by_stream(const ProcessImage& image) {
  std::map<uint64_t, std::vector<Interval>> by_stream;
  for (const Operation& op : image.operations) {
    for (const auto& gpu : op.gpu) by_stream[op.stream].push_back({gpu.start_ns, gpu.end_ns, &op});
  }
  for (auto& [stream, intervals] : by_stream)
    std::sort(intervals.begin(), intervals.end(),
              [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  return by_stream;
}

TEST_F(ThreadsAndStreams, KernelsOnDifferentStreamsOverlapOnTheGpu) {
  ASSERT_FALSE(HasFatalFailure());
  const auto by_stream = kernel_intervals_by_stream(image());
  ASSERT_EQ(by_stream.size(), static_cast<size_t>(kThreads));
  int overlapping_pairs = 0;
  for (auto a = by_stream.begin(); a != by_stream.end(); ++a) {
    for (auto b = std::next(a); b != by_stream.end(); ++b) {
      for (const Interval& x : a->second) {
        if (x.op->kind != OperationKind::kLaunch) continue;
        for (const Interval& y : b->second) {
          if (y.op->kind != OperationKind::kLaunch) continue;
          // Overlapping by more than rounding: both really ran at once.
          if (std::min(x.end_ns, y.end_ns) > std::max(x.start_ns, y.start_ns) + 100'000) ++overlapping_pairs;
        }
      }
    }
  }
  EXPECT_GT(overlapping_pairs, 0) << "no two kernels on different streams ran at the same time";
}

TEST_F(ThreadsAndStreams, WorkOnOneStreamNeverOverlaps) {
  ASSERT_FALSE(HasFatalFailure());
  size_t checked = 0;
  for (const auto& [stream, intervals] : kernel_intervals_by_stream(image())) {
    for (size_t i = 1; i < intervals.size(); ++i) {
      ++checked;
      EXPECT_LE(intervals[i - 1].end_ns, intervals[i].start_ns + kTimestampSlackNs)
          << "on stream 0x" << std::hex << stream << std::dec << ": " << intervals[i - 1].op->api
          << " ends " << intervals[i - 1].end_ns - intervals[i].start_ns << " ns after the next starts";
    }
  }
  // Every worker: rounds x (H2D, fill, add, D2H).
  EXPECT_EQ(checked, static_cast<size_t>(4 * kIterations * (1 + 2 + 3) - kThreads));
}

TEST_F(ThreadsAndStreams, EachWorkerHasItsOwnNamedTrackInTheJson) {
  ASSERT_FALSE(HasFatalFailure());
  const ProcessResult convert = run_proftrace({"convert", *dir_ / "x.trace", "-o", *dir_ / "x.json"});
  ASSERT_TRUE(convert.exited_with(0)) << convert.describe();
  PerfettoJson json;
  std::string error;
  ASSERT_TRUE(load_perfetto_json(*dir_ / "x.json", &json, &error)) << error;
  const ProcessImage& img = image();
  std::set<uint32_t> launching_tids;
  for (const Operation* launch : img.launches()) launching_tids.insert(launch->tid);
  for (uint32_t tid : launching_tids) {
    const auto name = json.thread_names.find({img.pid(), tid});
    ASSERT_NE(name, json.thread_names.end()) << "no thread_name for tid " << tid;
    EXPECT_EQ(name->second, img.thread_name(tid));
    int api_slices = 0;
    for (const JsonValue* slice : json.slices()) {
      if ((*slice)["pid"].as_uint() == img.pid() && (*slice)["tid"].as_uint() == tid &&
          (*slice)["name"].str() == "cudaLaunchKernel")
        ++api_slices;
    }
    int launches = 0;
    for (const Operation* launch : img.launches()) launches += launch->tid == tid;
    EXPECT_EQ(api_slices, launches) << name->second;
  }
}

// Largest overlap in ns between kernels launched by different threads.
uint64_t cross_thread_kernel_overlap_ns(const ProcessImage& image) {
  uint64_t best = 0;
  for (const Operation* a : image.launches()) {
    for (const Operation* b : image.launches()) {
      if (a->tid >= b->tid || a->gpu.empty() || b->gpu.empty()) continue;
      const uint64_t start = std::max(a->gpu.front().start_ns, b->gpu.front().start_ns);
      const uint64_t end = std::min(a->gpu.front().end_ns, b->gpu.front().end_ns);
      if (end > start) best = std::max(best, end - start);
    }
  }
  return best;
}

CudaTrace run_two_threads_on_default_streams(const TempDir& dir, const char* program) {
  const ProcessResult run = testing::run_process(
      traced(dir / "x.trace", {build_path(program), "--threads", "2", "--launches", "3"}, {},
             {{"SIMGPU_KERNEL_COSTS", "_Z16e2e_timed_kernelPfi=5ms"}}));
  EXPECT_TRUE(run.exited_with(0)) << run.describe();
  CudaTrace trace = load_trace_or_fail(dir / "x.trace");
  EXPECT_EQ(trace.images.size(), 1u) << describe(trace);
  return trace;
}

// Built with --default-stream per-thread, each thread's default stream is
// its own: two threads' kernels run at the same time, traced or not. (The
// profiler's timing events must go to the per-thread stream too: on the
// legacy stream they would serialize the threads.)
TEST(DefaultStreams, PerThreadDefaultStreamsOfTwoThreadsOverlap) {
  TempDir dir;
  const CudaTrace trace = run_two_threads_on_default_streams(dir, "STREAM_OPS_PER_THREAD");
  ASSERT_EQ(trace.images.size(), 1u);
  const ProcessImage& image = trace.images.front();
  ASSERT_EQ(image.launches().size(), 6u);
  for (const Operation* launch : image.launches()) EXPECT_EQ(launch->stream, format::kStreamPerThread);
  EXPECT_GT(cross_thread_kernel_overlap_ns(image), 2'000'000u) << describe(trace);
}

// Built plainly, both threads share the legacy default stream: the six
// 5 ms kernels run one after another, so together they span 30 ms. (Each
// kernel's own interval cannot be checked for overlap here: it is measured
// between events the launching thread records around its launch, and the
// other thread's launch can fall between them on the shared stream.)
TEST(DefaultStreams, LegacyDefaultStreamIsSharedByThreads) {
  TempDir dir;
  const CudaTrace trace = run_two_threads_on_default_streams(dir, "STREAM_OPS");
  ASSERT_EQ(trace.images.size(), 1u);
  const ProcessImage& image = trace.images.front();
  ASSERT_EQ(image.launches().size(), 6u);
  uint64_t first_start = UINT64_MAX, last_end = 0;
  for (const Operation* launch : image.launches()) {
    ASSERT_EQ(launch->gpu.size(), 1u);
    EXPECT_EQ(launch->stream, format::kStreamLegacy);
    first_start = std::min(first_start, launch->gpu.front().start_ns);
    last_end = std::max(last_end, launch->gpu.front().end_ns);
  }
  EXPECT_GE(last_end - first_start, 6 * 5'000'000u * 95 / 100) << describe(trace);
}

}  // namespace
}  // namespace proflaunch::e2e
