// The bounded join of GPU activity to its launch, on its own.
#include <gtest/gtest.h>

#include <vector>

#include "tools/proftrace/timeline/correlation_join.h"
#include "tools/proftrace/timeline/track_layout.h"

namespace proflaunch::tools::timeline {
namespace {

using namespace proflaunch::format;

struct RecordingSink : JoinSink {
  void joined(const HostOperation& op, const DeviceActivity& activity) override {
    EXPECT_EQ(op.span().correlation_id, activity.activity.correlation_id);
    EXPECT_EQ(op.section, activity.section);
    pairs.push_back(op.span().correlation_id);
  }
  void operation_alone(const HostOperation& op) override { lone_operations.push_back(op.span().correlation_id); }
  void activity_alone(const DeviceActivity& a) override { lone_activities.push_back(a.activity.correlation_id); }
  std::vector<uint64_t> pairs, lone_operations, lone_activities;
};

HostOperation operation(SectionContext* section, uint64_t id) {
  HostOperation op{section, 1, RecordKind::kKernelLaunch, {}};
  op.launch = KernelLaunchRecord{};
  op.launch.span.correlation_id = id;
  return op;
}

DeviceActivity device_activity(SectionContext* section, uint64_t id) {
  DeviceActivity a{section, 2, GpuActivityRecord{}};
  a.activity.correlation_id = id;
  return a;
}

TEST(CorrelationJoin, JoinsEitherOrderWithinASection) {
  SectionContext a, b;
  RecordingSink sink;
  CorrelationJoin join(sink, 100);
  join.add(operation(&a, 1));
  join.add(device_activity(&b, 1));  // same id, other section: no join
  join.add(device_activity(&a, 2));
  join.add(device_activity(&a, 1));
  join.add(operation(&a, 2));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(sink.lone_operations.empty());
  EXPECT_EQ(sink.lone_activities, (std::vector<uint64_t>{1}));
  EXPECT_EQ(join.stats().joined, 2u);
  EXPECT_EQ(join.stats().activities_without_operation, 1u);
}

TEST(CorrelationJoin, WindowStaysBoundedWhenNothingEverJoins) {
  // GPU timing off: every launch waits in vain. The window must not grow.
  SectionContext section;
  RecordingSink sink;
  CorrelationJoin join(sink, 64);
  for (uint64_t id = 1; id <= 100000; ++id) {
    join.add(operation(&section, id));
    ASSERT_LE(join.waiting(), 64u);
  }
  EXPECT_EQ(sink.lone_operations.size(), 100000u - 64u) << "evicted oldest first, while streaming";
  EXPECT_EQ(sink.lone_operations.front(), 1u);
  join.finish();
  EXPECT_EQ(sink.lone_operations.size(), 100000u);
  EXPECT_EQ(join.stats().evicted_by_window, 100000u - 64u);
}

TEST(CorrelationJoin, MatchedEntriesDoNotPinTheWindowOpen) {
  // One launch never matches while many others do: the window is bounded in
  // entries (matched ones included), so the stale one is evicted eventually.
  SectionContext section;
  RecordingSink sink;
  CorrelationJoin join(sink, 8);
  join.add(operation(&section, 999999));
  for (uint64_t id = 1; id <= 1000; ++id) {
    join.add(operation(&section, id));
    join.add(device_activity(&section, id));
  }
  EXPECT_EQ(sink.pairs.size(), 1000u);
  EXPECT_EQ(sink.lone_operations, (std::vector<uint64_t>{999999}));
}

TEST(CorrelationJoin, ZeroAndDuplicateIdsAreNotJoinedWrongly) {
  SectionContext section;
  RecordingSink sink;
  CorrelationJoin join(sink, 16);
  join.add(operation(&section, 0));
  join.add(device_activity(&section, 0));
  join.add(operation(&section, 5));
  join.add(operation(&section, 5));  // a writer bug: the first leaves unmatched
  join.add(device_activity(&section, 5));
  join.finish();
  EXPECT_EQ(sink.pairs, (std::vector<uint64_t>{5}));
  EXPECT_EQ(sink.lone_operations, (std::vector<uint64_t>{0, 5}));
  EXPECT_EQ(sink.lone_activities, (std::vector<uint64_t>{0}));
  EXPECT_EQ(join.stats().duplicate_ids, 1u);
}

}  // namespace
}  // namespace proflaunch::tools::timeline
