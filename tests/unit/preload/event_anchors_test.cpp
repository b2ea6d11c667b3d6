// The anchors that place GPU event times on the host clock (CUDA and HIP):
// which anchor an operation is measured from, how the oldest make room, and
// the lower bound that corrects an early anchor.
#include "preload/base/event_anchors.h"

#include <gtest/gtest.h>

#include <vector>

namespace proflaunch {
namespace {

using Anchors = EventAnchors<int, 3>;

TEST(EventAnchors, AnOperationIsMeasuredFromTheNewestAnchorKnownBeforeItsSubmission) {
  Anchors anchors;
  EXPECT_TRUE(anchors.due(0));
  anchors.keep({1, 1'000, 1'100});
  anchors.keep({2, 2'000'001'000, 2'000'001'100});
  EXPECT_EQ(anchors.for_submission(500).event, 1) << "before every anchor: the oldest";
  EXPECT_EQ(anchors.for_submission(1'100).event, 1);
  EXPECT_EQ(anchors.for_submission(2'000'001'099).event, 1) << "the second was not yet known complete";
  EXPECT_EQ(anchors.for_submission(2'000'001'100).event, 2);
  EXPECT_FALSE(anchors.due(2'000'001'100 + kAnchorRefreshNs - 1));
  EXPECT_TRUE(anchors.due(2'000'001'100 + kAnchorRefreshNs));
}

TEST(EventAnchors, TheOldestMakesRoomAndIsHandedBack) {
  Anchors anchors;
  EXPECT_EQ(anchors.keep({1, 10, 11}), 0);
  EXPECT_EQ(anchors.keep({2, 20, 21}), 0);
  EXPECT_EQ(anchors.keep({3, 30, 31}), 0);
  EXPECT_EQ(anchors.keep({4, 40, 41}), 1);
  EXPECT_EQ(anchors.count(), 3);
  EXPECT_EQ(anchors.at(0).event, 2);
  std::vector<int> destroyed;
  anchors.clear([&](int event) { destroyed.push_back(event); });
  EXPECT_EQ(destroyed, (std::vector<int>{2, 3, 4}));
  EXPECT_TRUE(anchors.empty());
}

TEST(EventAnchors, AnAnchorThatPlacesWorkBeforeItsSubmissionIsMovedLater) {
  uint64_t anchor_ns = 1'000'000;
  // 5 us after the anchor, for an event recorded 10 us after it: the anchor
  // was at least 5 us early.
  EXPECT_EQ(anchored_time(anchor_ns, 5'000.0, 1'010'000), 1'010'000u);
  EXPECT_EQ(anchor_ns, 1'005'000u);
  // A bound already met changes nothing.
  EXPECT_EQ(anchored_time(anchor_ns, 20'000.0, 1'010'000), 1'025'000u);
  EXPECT_EQ(anchor_ns, 1'005'000u);

  Anchors anchors;
  anchors.keep({7, 1'000'000, 1'000'100});
  anchors.raise(7, 999'000);
  EXPECT_EQ(anchors.at(0).host_ns, 1'000'000u) << "an anchor never moves earlier";
  anchors.raise(7, 1'005'000);
  EXPECT_EQ(anchors.at(0).host_ns, 1'005'000u);
}

TEST(EventAnchors, TheShortestRoundTripOfTheTriesIsKept) {
  std::vector<uint64_t> clock = {100, 180, 200, 230, 300, 400, 500, 520};  // round trips 80, 30, 100, 20
  size_t tick = 0;
  int next_event = 1;
  std::vector<int> destroyed;
  Anchors::Anchor best{};
  ASSERT_TRUE(take_anchor(
      best, [&](int* event) { *event = next_event++; return true; }, [](int) { return true; },
      [&](int event) { destroyed.push_back(event); }, [&] { return clock[tick++]; }));
  EXPECT_EQ(best.event, 4);
  EXPECT_EQ(best.host_ns, 500u) << "the start of the record call";
  EXPECT_EQ(best.published_ns, 520u);
  EXPECT_EQ(destroyed, (std::vector<int>{1, 3, 2}));
}

}  // namespace
}  // namespace proflaunch
