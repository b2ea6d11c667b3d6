// The simulated NCCL's barrier, tested from inside: a barrier every rank
// reached has succeeded, whatever happens to the communicator afterwards.
#include "segment.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

namespace simnccl {
namespace {

TEST(SimNcclSegment, AnAbortAfterEveryoneArrivedDoesNotFailTheBarrier) {
  // Rank 1 completes the barrier and aborts at once (as a rank that went on
  // to the next collective and found a dead peer does) before rank 0 wakes:
  // rank 0's barrier still succeeded, the next one fails.
  for (int round = 0; round < 20; ++round) {
    std::string error;
    std::unique_ptr<Segment> segment(Segment::create_private(2, error));
    ASSERT_NE(segment, nullptr) << error;
    std::atomic<int> first_result{-1};
    std::string first_error;
    std::thread rank0([&] { first_result = segment->barrier(0, 5'000'000'000, first_error); });
    while (segment->header().arrived.load() != 1) std::this_thread::yield();
    std::string second_error;
    ASSERT_EQ(segment->barrier(1, 5'000'000'000, second_error), ncclSuccess) << second_error;
    segment->abort();
    rank0.join();
    EXPECT_EQ(first_result.load(), ncclSuccess) << "round " << round << ": " << first_error;
    std::string next_error;
    EXPECT_EQ(segment->barrier(0, 5'000'000'000, next_error), ncclRemoteError);
    EXPECT_NE(next_error.find("aborted"), std::string::npos) << next_error;
  }
}

TEST(SimNcclSegment, AnAbortWhileWaitingFailsTheBarrier) {
  std::string error;
  std::unique_ptr<Segment> segment(Segment::create_private(2, error));
  ASSERT_NE(segment, nullptr) << error;
  std::atomic<int> result{-1};
  std::string wait_error;
  std::thread rank0([&] { result = segment->barrier(0, 5'000'000'000, wait_error); });
  while (segment->header().arrived.load() != 1) std::this_thread::yield();
  segment->abort();
  rank0.join();
  EXPECT_EQ(result.load(), ncclRemoteError);
  EXPECT_NE(wait_error.find("aborted"), std::string::npos) << wait_error;
}

}  // namespace
}  // namespace simnccl
