// The memory model's accounting, event by event: exact bytes per space after
// each call of a scenario whose totals follow from the calls alone.
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/memory/memory_events.h"
#include "tools/proftrace/memory/memory_state.h"

namespace proflaunch::testing {
namespace {

using tools::memory::Allocation;
using tools::memory::kHostSpace;
using tools::memory::MemoryEvent;
using tools::memory::MemoryObserver;
using tools::memory::MemoryState;
using tools::memory::SpaceKey;
using tools::memory::SpaceTotals;

const SpaceKey kDevice0{kSection, 0};
const SpaceKey kDevice1{kSection, 1};
const SpaceKey kHost{kSection, kHostSpace};

SpaceTotals totals_of(const MemoryState& state, const SpaceKey& key) {
  const SpaceTotals* totals = state.totals(key);
  return totals != nullptr ? *totals : SpaceTotals{};
}

TEST(MemoryState, AllocationsAndFreesGiveExactBytesAtEachMoment) {
  MemoryState state;
  state.apply(alloc(1000, 0xA000, 100 * kMiB));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 100 * kMiB);
  state.apply(alloc(2000, 0xB000, 300 * kMiB));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 400 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).live_blocks, 2u);
  state.apply(free_of(3000, 0xA000));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 300 * kMiB);
  // cuMemAlloc memory is held from the driver as long as it is allocated.
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 300 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).live_blocks, 1u);
  state.apply(free_of(4000, 0xB000));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 0u);
  EXPECT_EQ(state.counters().allocations, 2u);
  EXPECT_EQ(state.counters().frees, 2u);
}

TEST(MemoryState, DevicesAreSeparateSpacesAndAFreeCountsOnTheAllocationsDevice) {
  MemoryState state;
  state.apply(alloc(1000, 0xA000, 64 * kMiB, 0));
  state.apply(alloc(1100, 0xB000, 32 * kMiB, 1));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 64 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice1).allocated(), 32 * kMiB);
  // Freed while device 0 was current: still device 1's memory.
  state.apply(free_of(1200, 0xB000, 0));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 64 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice1).allocated(), 0u);
}

TEST(MemoryState, ManagedAndPinnedMemoryAreTrackedOnTheirOwn) {
  MemoryState state;
  state.apply(alloc(1000, 0xA000, 10 * kMiB));
  state.apply(memory_event(AllocationKind::kManaged, MemoryAction::kAcquire, 1100, 0xC000, 7 * kMiB));
  state.apply(memory_event(AllocationKind::kPinnedHost, MemoryAction::kAcquire, 1200, 0xD000, 3 * kMiB));
  state.apply(memory_event(AllocationKind::kRegisteredHost, MemoryAction::kAcquire, 1300, 0xE000, 5 * kMiB));
  const SpaceTotals device = totals_of(state, kDevice0);
  EXPECT_EQ(device.allocated(), 10 * kMiB);
  EXPECT_EQ(device.managed_bytes, 7 * kMiB);
  EXPECT_EQ(device.pinned(), 0u);
  const SpaceTotals host = totals_of(state, kHost);
  EXPECT_EQ(host.pinned_bytes, 3 * kMiB);
  EXPECT_EQ(host.registered_bytes, 5 * kMiB);
  EXPECT_EQ(host.allocated(), 0u);
  // cuMemFree of a managed address (recorded as device memory by the shim).
  state.apply(free_of(1400, 0xC000));
  EXPECT_EQ(totals_of(state, kDevice0).managed_bytes, 0u);
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 10 * kMiB);
  state.apply(memory_event(AllocationKind::kPinnedHost, MemoryAction::kRelease, 1500, 0xD000, 0));
  state.apply(memory_event(AllocationKind::kRegisteredHost, MemoryAction::kRelease, 1600, 0xE000, 0));
  EXPECT_EQ(totals_of(state, kHost).pinned(), 0u);
}

MemoryEvent pool_event(MemoryAction action, uint64_t t, uint64_t address, uint64_t bytes, uint64_t pool,
                       uint64_t reported_reserved) {
  MemoryEvent e = memory_event(AllocationKind::kPool, action, t, address, bytes);
  e.handle = pool;
  e.pool_reserved_bytes = reported_reserved;
  return e;
}

// A pool keeps freed memory for reuse: the program no longer holds it
// (allocated drops) but the process still does (reserved stays) until the
// pool gives it back (here a trim).
TEST(MemoryState, StreamOrderedAllocationsFollowThePoolsOwnReservedFigure) {
  MemoryState state;
  constexpr uint64_t kPool = 0x9001;
  state.apply(pool_event(MemoryAction::kAcquire, 1000, 0xA000, 10 * kMiB, kPool, 32 * kMiB));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 10 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).pool_bytes, 10 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 32 * kMiB);
  state.apply(pool_event(MemoryAction::kAcquire, 1100, 0xB000, 20 * kMiB, kPool, 32 * kMiB));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 30 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 32 * kMiB);
  state.apply(pool_event(MemoryAction::kRelease, 1200, 0xA000, 0, kPool, 32 * kMiB));
  state.apply(pool_event(MemoryAction::kRelease, 1300, 0xB000, 0, kPool, 32 * kMiB));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 0u);
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 32 * kMiB);
  MemoryEvent trim = pool_event(MemoryAction::kTrim, 1400, 0, 0, kPool, 0);
  state.apply(trim);
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 0u);
}

TEST(MemoryState, APoolWithoutAReservedFigureHoldsAtLeastWhatIsAllocatedFromIt) {
  MemoryState state;
  state.apply(pool_event(MemoryAction::kAcquire, 1000, 0xA000, 10 * kMiB, 0x9001, format::kPoolReservedUnknown));
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 10 * kMiB);
}

MemoryEvent vmm_event(AllocationKind kind, MemoryAction action, uint64_t t, uint64_t address, uint64_t bytes,
                      uint64_t handle) {
  MemoryEvent e = memory_event(kind, action, t, address, bytes);
  e.handle = handle;
  return e;
}

// PyTorch's expandable segments: physical memory is held from cuMemCreate
// until it is released and unmapped; only mapped memory is in use.
TEST(MemoryState, VmmPhysicalMemoryIsReservedUntilReleasedAndUnmappedAndMappingsAreAllocated) {
  MemoryState state;
  constexpr uint64_t kHandle = 0x4A4D;
  constexpr uint64_t kBase = 0x7000'0000;
  state.apply(vmm_event(AllocationKind::kPhysical, MemoryAction::kAcquire, 1000, 0, 4 * kMiB, kHandle));
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 4 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 0u);
  state.apply(vmm_event(AllocationKind::kAddressRange, MemoryAction::kAcquire, 1100, kBase, 64 * kMiB, 0));
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 4 * kMiB) << "address space is not memory";
  state.apply(vmm_event(AllocationKind::kMapping, MemoryAction::kAcquire, 1200, kBase, 2 * kMiB, kHandle));
  state.apply(vmm_event(AllocationKind::kMapping, MemoryAction::kAcquire, 1300, kBase + 2 * kMiB, 2 * kMiB, kHandle));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 4 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).mapped_bytes, 4 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).live_blocks, 2u);
  // Released while mapped (the usual order): still held.
  state.apply(vmm_event(AllocationKind::kPhysical, MemoryAction::kRelease, 1400, 0, 0, kHandle));
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 4 * kMiB);
  // One unmap covering both mappings frees everything.
  state.apply(vmm_event(AllocationKind::kMapping, MemoryAction::kRelease, 1500, kBase, 4 * kMiB, 0));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 0u);
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 0u);
  EXPECT_EQ(totals_of(state, kDevice0).live_blocks, 0u);
}

TEST(MemoryState, AnUnmapOfPartOfTheMappingsKeepsThePhysicalMemoryHeld) {
  MemoryState state;
  constexpr uint64_t kHandle = 0x4A4D;
  constexpr uint64_t kBase = 0x7000'0000;
  state.apply(vmm_event(AllocationKind::kPhysical, MemoryAction::kAcquire, 1000, 0, 4 * kMiB, kHandle));
  state.apply(vmm_event(AllocationKind::kMapping, MemoryAction::kAcquire, 1200, kBase, 2 * kMiB, kHandle));
  state.apply(vmm_event(AllocationKind::kMapping, MemoryAction::kAcquire, 1300, kBase + 2 * kMiB, 2 * kMiB, kHandle));
  state.apply(vmm_event(AllocationKind::kPhysical, MemoryAction::kRelease, 1400, 0, 0, kHandle));
  state.apply(vmm_event(AllocationKind::kMapping, MemoryAction::kRelease, 1500, kBase, 2 * kMiB, 0));
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 2 * kMiB);
  EXPECT_EQ(totals_of(state, kDevice0).reserved(), 4 * kMiB);
}

class Recorder : public MemoryObserver {
 public:
  void on_failure(const MemoryEvent& event, const SpaceKey&, const SpaceTotals& totals) override {
    failures.push_back({event.bytes, totals.allocated()});
  }
  void on_free(const Allocation& allocation) override { freed.push_back(allocation); }
  std::vector<std::pair<uint64_t, uint64_t>> failures;  // requested, allocated then
  std::vector<Allocation> freed;
};

TEST(MemoryState, FailedCallsChangeNothingAndFailedAllocationsAreReportedWithTheStateThen) {
  Recorder recorder;
  MemoryState state(&recorder);
  state.apply(alloc(1000, 0xA000, 100 * kMiB));
  state.apply(memory_event(AllocationKind::kDevice, MemoryAction::kAcquire, 1100, 0, 1024 * kMiB, 0,
                           /*CUDA_ERROR_OUT_OF_MEMORY*/ 2));
  MemoryEvent failed_free = free_of(1200, 0xA000);
  failed_free.result = 1;
  state.apply(failed_free);
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 100 * kMiB);
  ASSERT_EQ(recorder.failures.size(), 1u);
  EXPECT_EQ(recorder.failures[0].first, 1024 * kMiB);
  EXPECT_EQ(recorder.failures[0].second, 100 * kMiB);
  EXPECT_EQ(state.counters().failed_acquires, 1u);
  EXPECT_EQ(state.counters().failed_releases, 1u);
  EXPECT_TRUE(recorder.freed.empty());
}

TEST(MemoryState, FreesOfUnknownAddressesAreCountedAndFreeOfNullIsNot) {
  MemoryState state;
  state.apply(free_of(1000, 0xDEAD));
  state.apply(free_of(1100, 0));
  EXPECT_EQ(state.counters().unknown_frees, 1u);
  EXPECT_EQ(totals_of(state, kDevice0).allocated(), 0u);
}

TEST(MemoryState, AFreedAllocationKnowsItsLifetime) {
  Recorder recorder;
  MemoryState state(&recorder);
  state.apply(alloc(1000, 0xA000, 5 * kMiB));
  state.apply(free_of(4000, 0xA000));
  ASSERT_EQ(recorder.freed.size(), 1u);
  EXPECT_EQ(recorder.freed[0].time_ns, 1000u);
  EXPECT_EQ(recorder.freed[0].end_ns, 4000u);
  EXPECT_EQ(recorder.freed[0].bytes, 5 * kMiB);
}

}  // namespace
}  // namespace proflaunch::testing
