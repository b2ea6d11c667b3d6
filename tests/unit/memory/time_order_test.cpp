// TimeOrderBuffer: events of one section come out in time order although
// they arrive in file order (threads drained at different moments), within
// bounded memory, and deterministically.
#include <gtest/gtest.h>

#include <vector>

#include "tests/unit/memory/memory_events.h"
#include "tools/proftrace/memory/time_order.h"

namespace proflaunch::testing {
namespace {

using tools::memory::MemoryEvent;
using tools::memory::TimeOrderBuffer;

std::vector<uint64_t> release_times(TimeOrderBuffer& buffer, const std::vector<uint64_t>& arrival_times,
                                    uint64_t section = kSection) {
  std::vector<uint64_t> released;
  for (uint64_t t : arrival_times) {
    MemoryEvent e = alloc(t, t, 1);
    e.section_id = section;
    buffer.push(e, [&](const MemoryEvent& ready) { released.push_back(ready.time_ns); });
  }
  buffer.finish([&](const MemoryEvent& ready) { released.push_back(ready.time_ns); });
  return released;
}

TEST(TimeOrder, EventsWithinTheHorizonComeOutInTimeOrder) {
  TimeOrderBuffer buffer(TimeOrderBuffer::Options{1'000'000, 1000});
  // Thread B's chunk (times 200..400) reached the file before thread A's (100, 300).
  const auto released = release_times(buffer, {200'000, 400'000, 100'000, 300'000});
  EXPECT_EQ(released, (std::vector<uint64_t>{100'000, 200'000, 300'000, 400'000}));
  EXPECT_EQ(buffer.late_events(), 0u);
}

TEST(TimeOrder, EventsOlderThanTheHorizonAreReleasedAsNewerOnesArrive) {
  TimeOrderBuffer buffer(TimeOrderBuffer::Options{1000, 1000});
  std::vector<uint64_t> released;
  auto push = [&](uint64_t t) {
    buffer.push(alloc(t, t, 1), [&](const MemoryEvent& ready) { released.push_back(ready.time_ns); });
  };
  push(100);
  push(500);
  EXPECT_TRUE(released.empty());
  push(1600);  // 100 and 500 can no longer be overtaken by more than the horizon
  EXPECT_EQ(released, (std::vector<uint64_t>{100, 500}));
}

TEST(TimeOrder, AnEventLaterThanTheHorizonIsAppliedAtTheTimeReachedAndCounted) {
  TimeOrderBuffer buffer(TimeOrderBuffer::Options{1000, 1000});
  const auto released = release_times(buffer, {100, 5000, 9000, 200});
  // 200 arrived after 5000 had been released (9000 - 1000 > 5000).
  EXPECT_EQ(released, (std::vector<uint64_t>{100, 5000, 5000, 9000}));
  EXPECT_EQ(buffer.late_events(), 1u);
}

TEST(TimeOrder, AtMostMaxBufferedEventsWait) {
  TimeOrderBuffer buffer(TimeOrderBuffer::Options{UINT64_MAX / 2, 3});
  size_t released = 0;
  for (uint64_t t = 1; t <= 10; ++t) {
    buffer.push(alloc(t, t, 1), [&](const MemoryEvent&) { ++released; });
    EXPECT_EQ(released + 3, std::max<size_t>(t, 3)) << "at t=" << t;
  }
}

TEST(TimeOrder, SectionsAreOrderedIndependently) {
  TimeOrderBuffer buffer(TimeOrderBuffer::Options{1000, 1000});
  std::vector<std::pair<uint64_t, uint64_t>> released;
  auto push = [&](uint64_t section, uint64_t t) {
    MemoryEvent e = alloc(t, t, 1);
    e.section_id = section;
    buffer.push(e, [&](const MemoryEvent& ready) { released.push_back({ready.section_id, ready.time_ns}); });
  };
  // Another process's events far in the future do not push section 1's out.
  push(1, 100);
  push(2, 1'000'000);
  push(1, 50);
  EXPECT_TRUE(released.empty());
  buffer.finish([&](const MemoryEvent& ready) { released.push_back({ready.section_id, ready.time_ns}); });
  ASSERT_EQ(released.size(), 3u);
  EXPECT_EQ(buffer.late_events(), 0u);
}

}  // namespace
}  // namespace proflaunch::testing
