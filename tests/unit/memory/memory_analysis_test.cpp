// analyze_memory on traces with known allocations: the peak and its time,
// exactly what was live at the peak, failed allocations with the state at
// that moment, leaks at exit, churn, time order across threads, and
// downsampled timelines that keep the peak.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/memory/memory_scenario.h"

namespace proflaunch::testing {
namespace {

using tools::memory::AllocationView;
using tools::memory::kHostSpace;
using tools::memory::MemoryReport;
using tools::memory::SpaceReport;

const SpaceReport* device_space(const MemoryReport& report, int32_t device = 0, uint64_t section = kSection) {
  for (const SpaceReport& space : report.spaces)
    if (space.key.device == device && space.key.section_id == section) return &space;
  return nullptr;
}

std::vector<uint64_t> sizes(const std::vector<AllocationView>& allocations) {
  std::vector<uint64_t> bytes;
  for (const AllocationView& a : allocations) bytes.push_back(a.bytes);
  return bytes;
}

// 100, +200 -> 300, -100 -> 200, +50 -> 250, +300 -> 550 (peak at 5 s), -300 -> 250.
void peak_scenario(MemoryScenario& s) {
  s.alloc(1 * kSecond, 0xA0000, 100 * kMiB);
  s.alloc(2 * kSecond, 0xB0000, 200 * kMiB, kWorkerTid);
  s.free(3 * kSecond, 0xA0000);
  s.alloc(4 * kSecond, 0xC0000, 50 * kMiB);
  s.alloc(5 * kSecond, 0xD0000, 300 * kMiB);
  s.free(6 * kSecond, 0xD0000);
  s.end(7 * kSecond);
}

TEST(MemoryAnalysis, PeakIsTheHighestTotalAndWhenItHappened) {
  MemoryScenario s;
  peak_scenario(s);
  const MemoryReport report = analyze(s);
  const SpaceReport* space = device_space(report);
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(report.base_ns, kStartNs);
  EXPECT_EQ(space->peak_allocated.bytes, 550 * kMiB);
  EXPECT_EQ(space->peak_allocated.time_ns, kStartNs + 5 * kSecond);
  EXPECT_EQ(space->peak_reserved.bytes, 550 * kMiB);
  EXPECT_EQ(space->at_end.allocated(), 250 * kMiB);
  EXPECT_EQ(space->allocations, 4u);
  EXPECT_EQ(space->frees, 2u);
  EXPECT_EQ(space->device_name, "Test GPU");
  EXPECT_EQ(space->pid, kPid);
}

TEST(MemoryAnalysis, LiveAtThePeakIsExactlyWhatWasAllocatedThenWithWhoAllocatedIt) {
  MemoryScenario s;
  peak_scenario(s);
  const MemoryReport report = analyze(s);
  const SpaceReport* space = device_space(report);
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(space->live_at_peak_count, 3u);
  EXPECT_EQ(sizes(space->live_at_peak), (std::vector<uint64_t>{300 * kMiB, 200 * kMiB, 50 * kMiB}));
  const AllocationView& worker = space->live_at_peak[1];
  EXPECT_EQ(worker.address, 0xB0000u);
  EXPECT_EQ(worker.api, "cudaMalloc");
  EXPECT_EQ(worker.tid, kWorkerTid);
  EXPECT_EQ(worker.thread, "pt_worker");
  EXPECT_EQ(worker.time_ns, kStartNs + 2 * kSecond);
  EXPECT_FALSE(worker.stack.has_value()) << "no call stacks in this trace";
}

TEST(MemoryAnalysis, TimeOrderNotFileOrderDecidesTheTotals) {
  MemoryScenario s;
  // The worker's free (at 2 s) reaches the file in an earlier chunk than the
  // main thread's allocation (at 1 s) it frees.
  s.free(2 * kSecond, 0xA0000, kWorkerTid);
  s.builder().flush();
  s.alloc(1 * kSecond, 0xA0000, 64 * kMiB, kMainTid);
  s.end(3 * kSecond);
  const MemoryReport report = analyze(s);
  const SpaceReport* space = device_space(report);
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(report.counters.unknown_frees, 0u);
  EXPECT_EQ(space->peak_allocated.bytes, 64 * kMiB);
  EXPECT_EQ(space->at_end.allocated(), 0u);
  EXPECT_EQ(space->leaked_blocks, 0u);
}

TEST(MemoryAnalysis, AFailedAllocationCarriesTheStateAtThatMoment) {
  MemoryScenario s;
  s.alloc(1 * kSecond, 0xA0000, 100 * kMiB);
  s.alloc(2 * kSecond, 0xB0000, 400 * kMiB);
  s.alloc(3 * kSecond, 0, 2048 * kMiB, kWorkerTid, /*CUDA_ERROR_OUT_OF_MEMORY*/ 2);
  s.free(4 * kSecond, 0xB0000);
  s.end(5 * kSecond);
  const MemoryReport report = analyze(s);
  ASSERT_EQ(report.failures.size(), 1u);
  const auto& failure = report.failures[0];
  EXPECT_EQ(failure.time_ns, kStartNs + 3 * kSecond);
  EXPECT_EQ(failure.requested_bytes, 2048 * kMiB);
  EXPECT_EQ(failure.result, 2);
  EXPECT_EQ(failure.api, "cudaMalloc");
  EXPECT_EQ(failure.thread, "pt_worker");
  EXPECT_EQ(failure.totals.allocated(), 500 * kMiB);
  EXPECT_EQ(failure.totals.live_blocks, 2u);
  EXPECT_EQ(sizes(failure.largest), (std::vector<uint64_t>{400 * kMiB, 100 * kMiB}));
  EXPECT_EQ(device_space(report)->failures, 1u);
  EXPECT_EQ(report.counters.failed_acquires, 1u);
}

TEST(MemoryAnalysis, AllocationsNeverFreedAreLeaksAtExit) {
  MemoryScenario s;
  s.alloc(1 * kSecond, 0xA0000, 8 * kMiB);
  s.alloc(2 * kSecond, 0xB0000, 16 * kMiB);
  s.alloc(3 * kSecond, 0xC0000, 4 * kMiB);
  s.free(4 * kSecond, 0xA0000);
  s.end(5 * kSecond);
  const MemoryReport report = analyze(s);
  EXPECT_EQ(sizes(report.leaks), (std::vector<uint64_t>{16 * kMiB, 4 * kMiB}));
  EXPECT_EQ(report.leaks[0].address, 0xB0000u);
  EXPECT_EQ(report.leaks[0].end_ns, 0u);
  const SpaceReport* space = device_space(report);
  EXPECT_EQ(space->leaked_blocks, 2u);
  EXPECT_EQ(space->leaked_bytes, 20 * kMiB);
}

// 10 s of one allocation per millisecond, each freed 500 us later: the
// middle 80 % (1 s to 9 s) sees 1000 allocations and frees per second.
TEST(MemoryAnalysis, ChurnIsTheRateInTheSteadyState) {
  MemoryScenario s;
  for (uint64_t ms = 0; ms <= 10'000; ++ms) {
    s.alloc(ms * 1'000'000, 0x100000 + ms * 0x1000, kMiB);
    s.free(ms * 1'000'000 + 500'000, 0x100000 + ms * 0x1000);
  }
  const MemoryReport report = analyze(s);
  const SpaceReport* space = device_space(report);
  ASSERT_NE(space, nullptr);
  EXPECT_NEAR(space->churn.allocations_per_s(), 1000.0, 2.0);
  EXPECT_NEAR(space->churn.frees_per_s(), 1000.0, 2.0);
  EXPECT_NEAR(space->churn.allocated_bytes_per_s(), 1000.0 * kMiB, 2.0 * kMiB);
  EXPECT_EQ(space->peak_allocated.bytes, kMiB);
}

// 20 000 small allocations and one 1 GiB spike: the downsampled timeline is
// short and still holds the spike at its exact value.
TEST(MemoryAnalysis, DownsampledTimelinesKeepThePeak) {
  MemoryScenario s;
  for (uint64_t i = 0; i < 10'000; ++i) {
    s.alloc(i * 100'000, 0x100000 + i * 0x1000, kMiB);
    if (i == 6543) {
      s.alloc(i * 100'000 + 10, 0xF0000000, 1024 * kMiB);
      s.free(i * 100'000 + 20, 0xF0000000);
    }
    s.free(i * 100'000 + 50'000, 0x100000 + i * 0x1000);
  }
  tools::memory::AnalysisOptions options;
  options.timeline_buckets = 100;
  const MemoryReport report = analyze(s, options);
  const SpaceReport* space = device_space(report);
  ASSERT_NE(space, nullptr);
  EXPECT_LE(space->timeline.size(), 2 * 100u + 2);
  EXPECT_EQ(space->peak_allocated.bytes, 1025 * kMiB);
  EXPECT_EQ(space->peak_allocated.time_ns, kStartNs + 6543 * 100'000 + 10);
  const auto highest = std::max_element(space->timeline.begin(), space->timeline.end(), [](const auto& a, const auto& b) {
    return a.totals.allocated() < b.totals.allocated();
  });
  EXPECT_EQ(highest->totals.allocated(), 1025 * kMiB);
  EXPECT_EQ(highest->time_ns, kStartNs + 6543 * 100'000 + 10);
  EXPECT_TRUE(std::is_sorted(space->timeline.begin(), space->timeline.end(),
                             [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; }));
}

TEST(MemoryAnalysis, ShortTimelinesKeepEveryChange) {
  MemoryScenario s;
  peak_scenario(s);
  const MemoryReport report = analyze(s);
  const SpaceReport* space = device_space(report);
  std::vector<uint64_t> allocated;
  for (const auto& sample : space->timeline) allocated.push_back(sample.totals.allocated());
  EXPECT_EQ(allocated, (std::vector<uint64_t>{100 * kMiB, 300 * kMiB, 200 * kMiB, 250 * kMiB, 550 * kMiB, 250 * kMiB}));
}

TEST(MemoryAnalysis, PinnedHostMemoryIsTheProcessHostSpace) {
  MemoryScenario s;
  s.record(kMainTid, memory_record(AllocationKind::kPinnedHost, MemoryAction::kAcquire, kStartNs + kSecond, 0x5000,
                                   32 * kMiB));
  s.record(kMainTid, memory_record(AllocationKind::kRegisteredHost, MemoryAction::kAcquire, kStartNs + 2 * kSecond,
                                   0x9000, 8 * kMiB));
  s.record(kMainTid, memory_record(AllocationKind::kPinnedHost, MemoryAction::kRelease, kStartNs + 3 * kSecond,
                                   0x5000, 0));
  const MemoryReport report = analyze(s);
  const SpaceReport* host = device_space(report, kHostSpace);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->peak_pinned.bytes, 40 * kMiB);
  EXPECT_EQ(host->peak_pinned.time_ns, kStartNs + 2 * kSecond);
  EXPECT_EQ(sizes(host->live_at_peak), (std::vector<uint64_t>{32 * kMiB, 8 * kMiB}));
  EXPECT_EQ(device_space(report, 0), nullptr) << "no device memory was used";
}

TEST(MemoryAnalysis, EachProcessHasItsOwnSpaces) {
  MemoryScenario first(0x111, 100), second(0x222, 200);
  first.alloc(kSecond, 0xA000, 10 * kMiB);
  second.alloc(kSecond, 0xA000, 20 * kMiB);  // the same address in another process
  const std::string a = write_trace(first.builder(), "first.trace");
  const std::string b = write_trace(second.builder(), "second.trace");
  const MemoryReport report = analyze({a, b});
  ASSERT_NE(device_space(report, 0, 0x111), nullptr);
  ASSERT_NE(device_space(report, 0, 0x222), nullptr);
  EXPECT_EQ(device_space(report, 0, 0x111)->peak_allocated.bytes, 10 * kMiB);
  EXPECT_EQ(device_space(report, 0, 0x222)->peak_allocated.bytes, 20 * kMiB);
  EXPECT_EQ(device_space(report, 0, 0x222)->pid, 200u);
}

// The stack the pass paired with an allocating call is the one listed with
// it (formatted root first); a call without one lists none.
TEST(MemoryAnalysis, AStackRecordedForTheAllocatingCallIsShown) {
  MemoryScenario s;
  s.alloc(1 * kSecond, 0xA0000, 100 * kMiB);
  s.alloc(2 * kSecond, 0xB0000, 200 * kMiB, kWorkerTid);
  s.free(3 * kSecond, 0xA0000);
  s.alloc(4 * kSecond, 0xC0000, 50 * kMiB);
  s.alloc(5 * kSecond, 0xD0000, 300 * kMiB);
  s.stack_of_last(kStartNs + 5 * kSecond);  // memory_record's correlation id is its end time
  s.free(6 * kSecond, 0xD0000);
  s.end(7 * kSecond);
  std::vector<tools::InputTrace> inputs;
  std::string error;
  ASSERT_TRUE(tools::open_inputs({write_trace(s.builder(), "stacks.trace")}, &inputs, &error)) << error;
  tools::TraceModel model;
  tools::load_definitions(inputs, model);
  MemoryReport report = tools::memory::analyze_memory(inputs, model, {});
  tools::memory::attach_call_stacks(model, report);
  const SpaceReport* space = device_space(report);
  ASSERT_EQ(space->live_at_peak.size(), 3u);
  ASSERT_EQ(space->live_at_peak[0].bytes, 300 * kMiB);
  ASSERT_TRUE(space->live_at_peak[0].stack.has_value());
  EXPECT_EQ(*space->live_at_peak[0].stack, "main (train.cpp:7)\ntrain_step (train.cpp:42)");
  EXPECT_FALSE(space->live_at_peak[1].stack.has_value());
  EXPECT_EQ(report.stacks_found, 2u) << "the 300 MiB block is listed at the peak and among the intervals";
}

}  // namespace
}  // namespace proflaunch::testing

namespace proflaunch::testing {
namespace {

using tools::memory::MemoryReport;
using tools::memory::SpaceReport;

// A CUDA graph's memory: the captured cudaMallocAsync/cudaFreeAsync allocate
// nothing themselves; the graph's mem-alloc node (64 MiB) is taken at the
// first launch (not again at the second) and given back when the executable
// graph is destroyed.
TEST(MemoryAnalysis, AGraphsMemoryIsTakenAtItsFirstLaunchAndGivenBackWithIt) {
  constexpr uint64_t kMiBytes = 1024 * 1024;
  MemoryScenario s;
  format::TraceBuilder& trace = s.builder();
  const uint16_t launch_api = trace.api(s.section(), "cudaGraphLaunch", format::ApiDomain::kRuntime);
  const uint16_t destroy_api = trace.api(s.section(), "cudaGraphExecDestroy", format::ApiDomain::kRuntime);
  s.alloc(1 * kSecond, 0xA000, 10 * kMiBytes);
  // Captured: recorded, but nothing is allocated by the call.
  auto captured = memory_record(format::AllocationKind::kPool, format::MemoryAction::kAcquire, kStartNs + 2 * kSecond,
                                0xC000, 64 * kMiBytes, 0, 0);
  captured.span.flags |= format::kApiCaptured;
  s.record(kMainTid, captured);
  format::GraphNodeRecord node{};
  node.type = static_cast<uint8_t>(format::GraphNodeType::kMemAlloc);
  node.graph_exec = 0xE0;
  node.graph = 0x60;
  node.node = 0x1;
  node.device = 0;
  node.bytes = 64 * kMiBytes;
  node.address = 0xC000;
  trace.event(s.section(), kMainTid, node);
  format::GraphExecRecord instantiate{};
  instantiate.span.begin_ns = instantiate.span.end_ns = kStartNs + 3 * kSecond;
  instantiate.graph_exec = 0xE0;
  instantiate.action = static_cast<uint8_t>(format::GraphExecAction::kInstantiate);
  trace.event(s.section(), kMainTid, instantiate);
  for (uint64_t i = 0; i < 2; ++i) {
    format::GraphLaunchRecord launch{};
    launch.span.api = launch_api;
    launch.span.begin_ns = launch.span.end_ns = kStartNs + (4 + i) * kSecond;
    launch.graph_exec = 0xE0;
    trace.event(s.section(), kMainTid, launch);
  }
  format::GraphExecRecord destroy{};
  destroy.span.api = destroy_api;
  destroy.span.begin_ns = destroy.span.end_ns = kStartNs + 7 * kSecond;
  destroy.graph_exec = 0xE0;
  destroy.action = static_cast<uint8_t>(format::GraphExecAction::kDestroy);
  trace.event(s.section(), kMainTid, destroy);
  s.alloc(8 * kSecond, 0xD000, 20 * kMiBytes);
  s.end(9 * kSecond);

  const MemoryReport report = analyze(s);
  const SpaceReport* space = device_space(report);
  ASSERT_NE(space, nullptr);
  EXPECT_EQ(space->peak_allocated.bytes, 74 * kMiBytes) << "10 MiB + the graph's 64 MiB, once";
  EXPECT_EQ(space->peak_allocated.time_ns, kStartNs + 4 * kSecond) << "taken at the first launch";
  ASSERT_EQ(space->live_at_peak.size(), 2u);
  EXPECT_EQ(space->live_at_peak[0].bytes, 64 * kMiBytes);
  EXPECT_EQ(space->live_at_peak[0].api, "cudaGraphLaunch");
}

}  // namespace
}  // namespace proflaunch::testing
